package jobs

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
)

func bash(cmd string) Spawner {
	return Exec(ExecSpec{Argv: []string{"bash", "-c", cmd}, Dir: os.TempDir(), Grace: 300 * time.Millisecond})
}

func spec(owner, cmd string) Spec { return Spec{Owner: owner, Kind: "bash", Label: cmd} }

func newReg(t *testing.T, opts Options) (*Registry, chan Notice) {
	ch := make(chan Notice, 16)
	opts.Notify = func(n Notice) { ch <- n }
	r := NewRegistry(opts)
	t.Cleanup(func() { r.Close(5 * time.Second) })
	return r, ch
}

func start(t *testing.T, r *Registry, owner, cmd string) *Job {
	t.Helper()
	j, err := r.Start(spec(owner, cmd), bash(cmd))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func waitNotice(t *testing.T, ch chan Notice) Notice {
	t.Helper()
	return waittest.Recv(t, ch, "the completion notice")
}

// noNotice fails when a notice arrives within a short while (after the
// job's settlement, which the caller waited for).
func noNotice(t *testing.T, ch chan Notice) {
	t.Helper()
	select {
	case n := <-ch:
		t.Fatalf("unexpected notice %q", n.Text)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestBackgroundJobNotifiesWhenItSettles(t *testing.T) {
	r, ch := newReg(t, Options{})
	j := start(t, r, "s1", "sleep 0.2; echo done")
	if j.ID() != "bash-1" {
		t.Errorf("id = %s", j.ID())
	}
	n := waitNotice(t, ch)
	want := Notice{Owner: "s1", JobID: "bash-1", Kind: "bash", Label: "sleep 0.2; echo done", Status: "completed", Detail: "exit code: 0",
		Text:    "background job bash-1 (bash: sleep 0.2; echo done) finished [status: completed, exit code: 0]. Read its output with job_output.",
		Summary: "bash sleep 0.2; echo done [status: completed, exit code: 0]"}
	if n != want {
		t.Errorf("notice\n%+v\nwant\n%+v", n, want)
	}
	if got := j.Read().Text(); got != "done\n[status: completed, exit code: 0]" {
		t.Errorf("read = %q", got)
	}
	if got := j.Read().Text(); got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("second read = %q", got)
	}
}

// TestIDsOnlyForStartsThatReturned: a start whose spawn failed takes no
// number; numbers are per kind for the whole registry (every owner), never
// reused; a foreground run takes none.
func TestIDsOnlyForStartsThatReturned(t *testing.T) {
	r, _ := newReg(t, Options{})
	if _, err := r.Start(spec("A", "x"), Exec(ExecSpec{Argv: []string{"/nonexistent/prog"}})); err == nil {
		t.Fatal("a failed spawn started")
	}
	fg, err := r.Run(spec("A", "true"), bash("true"))
	if err != nil {
		t.Fatal(err)
	}
	a := start(t, r, "A", "true")
	b := start(t, r, "B", "true")
	c, err := r.Start(Spec{Owner: "A", Kind: "subagent", Label: "x"}, bash("true"))
	if err != nil {
		t.Fatal(err)
	}
	if fg.ID() != "" || a.ID() != "bash-1" || b.ID() != "bash-2" || c.ID() != "subagent-1" {
		t.Errorf("ids: foreground %q, %s %s %s", fg.ID(), a.ID(), b.ID(), c.ID())
	}
	if len(r.List("A")) != 2 {
		t.Errorf("List(A) = %d jobs, want 2 (the foreground run is not listed)", len(r.List("A")))
	}
}

// TestAdmissionBound: the bound counts an owner's running and stopping jobs;
// the start beyond it is refused with upstream's text and its command never
// runs; a settled job frees its slot, a job_kill'ed one keeps it until its
// process exits; other owners have their own bound.
func TestAdmissionBound(t *testing.T) {
	r, _ := newReg(t, Options{MaxConcurrentJobsPerOwner: 2})
	marker := t.TempDir() + "/ran"
	first := start(t, r, "s", "trap 'sleep 0.5; exit 0' TERM; sleep 30 & wait")
	start(t, r, "s", "sleep 30")
	_, err := r.Start(spec("s", "touch "+marker), func(stdout, stderr io.Writer) (Process, error) {
		t.Error("the refused command was spawned")
		return bash("touch "+marker)(stdout, stderr)
	})
	var le *LimitError
	if !errors.As(err, &le) || err.Error() != "background job limit reached for this owner (limit: 2); use job_kill to stop an unneeded job, wait for it to finish, then retry" {
		t.Fatalf("third start: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused command ran")
	}
	start(t, r, "other", "true")       // another owner's bucket
	time.Sleep(100 * time.Millisecond) // let bash install its trap
	if !first.Cancel("job_kill") {
		t.Fatal("Cancel of a live job reported already finished")
	}
	if st, _ := first.StatusDetail(); st != StatusStopping {
		t.Errorf("status after job_kill = %s, want stopping", st)
	}
	if _, err := r.Start(spec("s", "true"), bash("true")); !errors.As(err, &le) {
		t.Errorf("a stopping job freed its slot: %v", err)
	}
	waittest.Closed(t, first.Done(), "the first job")
	if _, err := r.Start(spec("s", "true"), bash("true")); err != nil {
		t.Errorf("the slot of a settled job is still taken: %v", err)
	}
}

func TestAdoptGivesAForegroundRunAnID(t *testing.T) {
	r, ch := newReg(t, Options{MaxConcurrentJobsPerOwner: 1})
	private := NewRegistry(Options{})
	t.Cleanup(func() { private.Close(time.Second) })
	marker := t.TempDir() + "/finished"
	cmd := "echo started; sleep 0.3; touch " + marker
	fg, err := private.Run(spec("s", cmd), bash(cmd))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Adopt(fg); err != nil {
		t.Fatal(err)
	}
	if fg.ID() != "bash-1" {
		t.Errorf("adopted id %q", fg.ID())
	}
	other, _ := private.Run(spec("s", "sleep 1"), bash("sleep 1"))
	var le *LimitError
	if err := r.Adopt(other); !errors.As(err, &le) {
		t.Errorf("adoption beyond the bound: %v", err)
	}
	other.Kill()
	if n := waitNotice(t, ch); n.JobID != "bash-1" || n.Status != "completed" {
		t.Errorf("notice %+v", n)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the adopted process did not run to the end")
	}
	// adopted after it settled: the notice comes at once
	done, _ := private.Run(spec("s", "true"), bash("true"))
	waittest.Closed(t, done.Done(), "the job")
	if err := r.Adopt(done); err != nil {
		t.Fatal(err)
	}
	if n := waitNotice(t, ch); n.JobID != "bash-2" {
		t.Errorf("notice %+v", n)
	}
}

// TestReportedJobsSendNoNotice: job_kill, a read of the settled job, a wait
// pending at settlement and Close each report a job; unowned jobs never
// notify.
func TestReportedJobsSendNoNotice(t *testing.T) {
	t.Run("job_kill", func(t *testing.T) {
		r, ch := newReg(t, Options{})
		j := start(t, r, "s", "sleep 30")
		j.Cancel("job_kill")
		waittest.Closed(t, j.Done(), "the job")
		noNotice(t, ch)
		if got := j.Read().Text(); got != "(no new output)\n[status: killed, signal: SIGTERM]" {
			t.Errorf("read = %q", got)
		}
	})
	t.Run("a pending wait", func(t *testing.T) {
		r, ch := newReg(t, Options{})
		j := start(t, r, "s", "sleep 0.2")
		if ok, err := j.WaitFor(context.Background(), 10*time.Second); !ok || err != nil {
			t.Fatalf("wait %v %v", ok, err)
		}
		noNotice(t, ch)
	})
	t.Run("a read after settlement", func(t *testing.T) {
		r, ch := newReg(t, Options{})
		private := NewRegistry(Options{})
		t.Cleanup(func() { private.Close(time.Second) })
		j, err := private.Run(spec("s", "true"), bash("true"))
		if err != nil {
			t.Fatal(err)
		}
		waittest.Closed(t, j.Done(), "the job")
		j.Read()
		if err := r.Adopt(j); err != nil {
			t.Fatal(err)
		}
		noNotice(t, ch)
	})
	t.Run("unowned", func(t *testing.T) {
		r, ch := newReg(t, Options{})
		j := start(t, r, "", "true")
		waittest.Closed(t, j.Done(), "the job")
		noNotice(t, ch)
	})
	t.Run("close", func(t *testing.T) {
		ch := make(chan Notice, 4)
		r := NewRegistry(Options{Notify: func(n Notice) { ch <- n }})
		j := start(t, r, "s", "sleep 30")
		if err := r.Close(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		if s, done := j.Settled(); !done || s.Outcome.Signal != "SIGTERM" || j.StopReason() != "the job registry was closed" {
			t.Errorf("settled %+v %v, reason %q", s, done, j.StopReason())
		}
		noNotice(t, ch)
		if _, err := r.Start(spec("s", "true"), bash("true")); !errors.Is(err, ErrClosed) {
			t.Errorf("start after close: %v", err)
		}
	})
}

func TestStatusesAndDetails(t *testing.T) {
	tests := []struct {
		name, cmd string
		kill      bool
		detail    string
	}{
		{"job_kill terminates with SIGTERM", "sleep 30", true, "[status: killed, signal: SIGTERM]"},
		{"self-signal is reported as killed", "kill -TERM $$", false, "[status: killed, signal: SIGTERM]"},
		{"ignored SIGTERM escalates to SIGKILL after grace", "trap '' TERM; sleep 30", true, "[status: killed, signal: SIGKILL]"},
		{"non-zero exit is completed with its code", "exit 3", false, "[status: completed, exit code: 3]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newReg(t, Options{})
			j := start(t, r, "s", tt.cmd)
			if tt.kill {
				time.Sleep(100 * time.Millisecond) // let bash install its trap
				j.Kill()
			}
			waittest.Closed(t, j.Done(), "the job")
			if got := j.Read().Text(); !strings.HasSuffix(got, tt.detail) {
				t.Errorf("read %q lacks %q", got, tt.detail)
			}
		})
	}
}

func TestNoticeSummaryCut(t *testing.T) {
	s120 := strings.Repeat("a", 120)
	tests := []struct{ in, want string }{
		{s120, s120},
		{s120 + "b", strings.Repeat("a", 119) + "…"},
		{strings.Repeat("a", 118) + "😀b", strings.Repeat("a", 118) + "…"}, // a surrogate pair is never split
		{strings.Repeat("é", 121), strings.Repeat("é", 119) + "…"},
	}
	for _, tc := range tests {
		if got := NoticeSummary(tc.in); got != tc.want {
			t.Errorf("NoticeSummary(%d runes) = %q, want %q", len([]rune(tc.in)), got, tc.want)
		}
	}
}

func TestGetAndList(t *testing.T) {
	r, _ := newReg(t, Options{})
	a := start(t, r, "A", "true")
	b := start(t, r, "B", "true")
	u := start(t, r, "", "printf 'two\\nlines'")
	if _, err := r.Get("A", "bash-9"); err == nil || err.Error() != "unknown job bash-9" {
		t.Errorf("unknown: %v", err)
	}
	if _, err := r.Get("A", b.ID()); err == nil || err.Error() != "job bash-2 belongs to another session" {
		t.Errorf("foreign: %v", err)
	}
	if j, err := r.Get("A", u.ID()); err != nil || j != u {
		t.Errorf("unowned job not visible: %v", err)
	}
	list := r.List("A")
	if len(list) != 2 || list[0] != a || list[1] != u {
		t.Errorf("List(A) = %v", list)
	}
}

func TestIncrementalReads(t *testing.T) {
	r, _ := newReg(t, Options{})
	gate := t.TempDir() + "/gate"
	cmd := "echo first; echo oops >&2; while [ ! -e " + gate + " ]; do sleep 0.02; done; echo second"
	j := start(t, r, "s", cmd)
	waittest.Until(t, 10*time.Millisecond, "the job's first output", func() bool { return j.stdout.Total() >= 6 && j.stderr.Total() >= 5 })
	if got := j.Read().Text(); got != "first\n[stderr]\noops\n[status: running]" {
		t.Errorf("first read = %q", got)
	}
	if got := j.Read().Text(); got != "(no new output)\n[status: running]" {
		t.Errorf("empty read = %q", got)
	}
	os.WriteFile(gate, nil, 0o600)
	waittest.Closed(t, j.Done(), "the job")
	if got := j.Read().Text(); got != "second\n[status: completed, exit code: 0]" {
		t.Errorf("last read = %q", got)
	}
}

func TestLossyReadPointsAtFullOutput(t *testing.T) {
	r, _ := newReg(t, Options{MaxOutputBytes: 16, OutputDir: t.TempDir()})
	j := start(t, r, "s", "seq 1 100")
	waittest.Closed(t, j.Done(), "the job")
	rd := j.Read()
	if !rd.Delta.Lossy || len(rd.Delta.FullOutputPaths) != 1 {
		t.Fatalf("read = %+v", rd)
	}
	full, _ := os.ReadFile(rd.Delta.FullOutputPaths[0])
	want := ""
	for i := 1; i <= 100; i++ {
		want += strconv.Itoa(i) + "\n"
	}
	if string(full) != want {
		t.Error("full output file is not the complete stream")
	}
	fi, _ := os.Stat(rd.Delta.FullOutputPaths[0])
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	text := rd.Text()
	if !strings.HasPrefix(text, want[len(want)-16:]) || !strings.Contains(text, "[some output was dropped from memory; full output: "+rd.Delta.FullOutputPaths[0]+"]") {
		t.Errorf("text = %q", text)
	}
}

// TestRunnerThatNeverRan: the job exists (its start returned), settles as
// killed before exit, its notice says the spawn failed, and every read shows
// the spawn failure once and the runner marker each time.
func TestRunnerThatNeverRan(t *testing.T) {
	r, ch := newReg(t, Options{EscalationAdvertised: true})
	cause := errors.New("Error: spawn /ws/.dsh-missing-sandbox-runner ENOENT")
	j, err := r.Start(spec("s", "true"), Failed(cause, &sandbox.Report{Mode: sandbox.ReadOnly, RunnerFailed: true}))
	if err != nil || j.ID() != "bash-1" {
		t.Fatalf("start %v %v", j, err)
	}
	n := waitNotice(t, ch)
	if !n.SpawnFailed || n.Text != "background job bash-1 (bash: true) finished [status: killed, killed before exit]. Read its output with job_output." ||
		n.Summary != "bash true [status: killed, killed before exit]" {
		t.Errorf("notice %+v", n)
	}
	want := "[stderr]\nspawn failed: Error: spawn /ws/.dsh-missing-sandbox-runner ENOENT\n" + sandbox.RunnerFailedMarker(sandbox.ReadOnly) + "\n[status: killed, killed before exit]"
	if got := j.Read().Text(); got != want {
		t.Errorf("read = %q\nwant %q", got, want)
	}
	if got := j.Read().Text(); got != sandbox.RunnerFailedMarker(sandbox.ReadOnly)+"\n[status: killed, killed before exit]" {
		t.Errorf("second read = %q", got)
	}
}

func TestWaitForCancelled(t *testing.T) {
	r, _ := newReg(t, Options{})
	j := start(t, r, "s", "sleep 5")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if settled, err := j.WaitFor(ctx, time.Minute); settled || !errors.Is(err, context.Canceled) {
		t.Errorf("settled=%v err=%v", settled, err)
	}
}

// TestCloseWhileSpawning: a process whose start returns after Close is
// killed at once and the start fails, so nothing outlives the registry.
func TestCloseWhileSpawning(t *testing.T) {
	for _, registered := range []bool{true, false} {
		r := NewRegistry(Options{})
		var proc Process
		spawn := func(stdout, stderr io.Writer) (Process, error) {
			if err := r.Close(time.Second); err != nil {
				t.Error(err)
			}
			p, err := bash("sleep 30")(stdout, stderr)
			proc = p
			return p, err
		}
		start := r.Run
		if registered {
			start = r.Start
		}
		if _, err := start(spec("s", "sleep 30"), spawn); !errors.Is(err, ErrClosed) {
			t.Fatalf("registered %v: start during Close: %v", registered, err)
		}
		done := make(chan Settled)
		go func() { done <- proc.Wait() }()
		select {
		case s := <-done:
			if s.Outcome.Signal != "SIGTERM" {
				t.Errorf("the process ended with %+v", s.Outcome)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the process started during Close still runs")
		}
	}
}

func TestPanickingNotifyDoesNotCrash(t *testing.T) {
	r := NewRegistry(Options{Notify: func(Notice) { panic("receiver broke") }})
	t.Cleanup(func() { r.Close(5 * time.Second) })
	j := start(t, r, "s", "echo ok")
	waittest.Closed(t, j.Done(), "the job")
	time.Sleep(50 * time.Millisecond)
	if got := j.Read().Text(); got != "ok\n[status: completed, exit code: 0]" {
		t.Errorf("read = %q", got)
	}
}

// pidless is a Process without a pid (not a Leader) that runs until killed.
type pidless struct{ killed chan struct{} }

func (p pidless) Wait() Settled { <-p.killed; return Settled{Outcome: render.Outcome{Killed: true}} }
func (p pidless) Kill() {
	select {
	case <-p.killed:
	default:
		close(p.killed)
	}
}

// TestRunningPIDs: the leaders of the registered jobs that have not settled,
// in registration order; settled jobs, unregistered runs and processes
// without a pid are left out, an adopted run counts.
func TestRunningPIDs(t *testing.T) {
	r, _ := newReg(t, Options{})
	if got := r.RunningPIDs(); len(got) != 0 {
		t.Fatalf("empty registry: %v", got)
	}
	first := start(t, r, "s1", "sleep 30")
	done := start(t, r, "s1", "true")
	waittest.Closed(t, done.Done(), "the job")
	noPid, err := r.Start(spec("s2", "none"), func(io.Writer, io.Writer) (Process, error) {
		return pidless{killed: make(chan struct{})}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	private := NewRegistry(Options{})
	t.Cleanup(func() { private.Close(time.Second) })
	run, err := private.Run(spec("s1", "sleep 30"), bash("sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	leader := func(j *Job) int { return j.proc.(Leader).Pid() }
	if got, want := r.RunningPIDs(), []int{leader(first)}; !slices.Equal(got, want) {
		t.Errorf("running %v, want %v (the unregistered run %d, the settled job and the pidless one are not listed)", got, want, leader(run))
	}
	if err := r.Adopt(run); err != nil {
		t.Fatal(err)
	}
	if got, want := r.RunningPIDs(), []int{leader(first), leader(run)}; !slices.Equal(got, want) {
		t.Errorf("after adoption: running %v, want %v", got, want)
	}
	first.Kill()
	waittest.Closed(t, first.Done(), "the first job")
	if got, want := r.RunningPIDs(), []int{leader(run)}; !slices.Equal(got, want) {
		t.Errorf("after the kill: running %v, want %v", got, want)
	}
	noPid.Kill()
}
