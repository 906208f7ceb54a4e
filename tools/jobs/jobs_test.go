package jobs

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/sandbox"
)

func bash(cmd string) Spawner {
	return Exec(ExecSpec{Argv: []string{"bash", "-c", cmd}, Dir: os.TempDir(), Grace: 300 * time.Millisecond})
}

func newReg(t *testing.T, opts Options) (*Registry, chan Notice) {
	ch := make(chan Notice, 16)
	opts.Notify = func(n Notice) { ch <- n }
	r := New(opts)
	t.Cleanup(func() { r.Close(5 * time.Second) })
	return r, ch
}

func waitNotice(t *testing.T, ch chan Notice) Notice {
	t.Helper()
	select {
	case n := <-ch:
		return n
	case <-time.After(20 * time.Second):
		t.Fatal("no completion notice")
	}
	return Notice{}
}

func noNotice(t *testing.T, ch chan Notice) {
	t.Helper()
	select {
	case n := <-ch:
		t.Fatalf("unexpected notice %q", n.Text)
	default:
	}
}

func TestBackgroundJobReportsCompletion(t *testing.T) {
	r, ch := newReg(t, Options{})
	j, err := r.Start("s1", "bash", "sleep 0.3; echo done", true, bash("sleep 0.3; echo done"))
	if err != nil {
		t.Fatal(err)
	}
	if j.ID != "bash-1" {
		t.Errorf("id = %s", j.ID)
	}
	n := waitNotice(t, ch)
	want := "background job bash-1 (bash: sleep 0.3; echo done) finished [status: completed, exit code: 0]. Read its output with job_output."
	if n.Text != want || n.Owner != "s1" {
		t.Errorf("notice = %+v", n)
	}
	if got := j.Read().Text(); got != "done\n[status: completed, exit code: 0]" {
		t.Errorf("read = %q", got)
	}
	if got := j.Read().Text(); got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("second read = %q", got)
	}
}

func TestForegroundTimeoutIsPromotedNotKilled(t *testing.T) {
	r, ch := newReg(t, Options{})
	marker := t.TempDir() + "/finished"
	cmd := "echo started; sleep 0.4; echo done; touch " + marker
	j, err := r.Start("s1", "bash", cmd, false, bash(cmd))
	if err != nil {
		t.Fatal(err)
	}
	settled, err := j.WaitFor(context.Background(), 50*time.Millisecond)
	if err != nil || settled {
		t.Fatalf("settled=%v err=%v", settled, err)
	}
	j.Promote()
	noNotice(t, ch)
	n := waitNotice(t, ch)
	if n.Text != "background job bash-1 (bash: "+cmd+") finished [status: completed, exit code: 0]. Read its output with job_output." {
		t.Errorf("notice = %q", n.Text)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the promoted process did not run to the end: %v", err)
	}
	if got := j.Read().Text(); got != "started\ndone\n[status: completed, exit code: 0]" {
		t.Errorf("read = %q", got)
	}
}

func TestForegroundSettledWithinWaitIsForgottenWithoutNotice(t *testing.T) {
	r, ch := newReg(t, Options{})
	j, _ := r.Start("s1", "bash", "echo hi", false, bash("echo hi"))
	settled, err := j.WaitFor(context.Background(), 10*time.Second)
	if !settled || err != nil {
		t.Fatalf("settled=%v err=%v", settled, err)
	}
	j.Forget()
	if _, ok := r.Get("s1", j.ID); ok {
		t.Error("record kept")
	}
	time.Sleep(50 * time.Millisecond)
	noNotice(t, ch)
	if out, _ := j.Streams(); out.Text != "hi\n" {
		t.Errorf("stdout = %q", out.Text)
	}
}

func TestPromoteAfterSettleSendsOneNotice(t *testing.T) {
	r, ch := newReg(t, Options{})
	j, _ := r.Start("s1", "bash", "true", false, bash("true"))
	<-j.Done()
	j.Promote()
	j.Promote()
	waitNotice(t, ch)
	noNotice(t, ch)
}

func TestJobKillAndSignals(t *testing.T) {
	tests := []struct {
		name   string
		cmd    string
		kill   bool
		detail string
	}{
		{"job_kill terminates with SIGTERM", "sleep 30", true, "[status: killed, signal: SIGTERM]"},
		{"self-signal is reported as killed", "kill -TERM $$", false, "[status: killed, signal: SIGTERM]"},
		{"ignored SIGTERM escalates to SIGKILL after grace", "trap '' TERM; sleep 30", true, "[status: killed, signal: SIGKILL]"},
		{"non-zero exit is completed with its code", "exit 3", false, "[status: completed, exit code: 3]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ch := newReg(t, Options{})
			j, err := r.Start("s", "bash", tt.cmd, true, bash(tt.cmd))
			if err != nil {
				t.Fatal(err)
			}
			if tt.kill {
				time.Sleep(100 * time.Millisecond) // let bash install its trap
				j.Kill()
				if !j.KillRequested() {
					t.Error("kill not recorded")
				}
			}
			n := waitNotice(t, ch)
			if !strings.Contains(n.Text, tt.detail) {
				t.Errorf("notice %q lacks %q", n.Text, tt.detail)
			}
			if got := j.Read().Text(); !strings.HasSuffix(got, tt.detail) {
				t.Errorf("read %q lacks %q", got, tt.detail)
			}
		})
	}
}

func TestOwnersAreIsolated(t *testing.T) {
	r, _ := newReg(t, Options{})
	a, _ := r.Start("A", "bash", "true", true, bash("true"))
	a2, _ := r.Start("A", "bash", "true", true, bash("true"))
	b, _ := r.Start("B", "bash", "true", true, bash("true"))
	if a.ID != "bash-1" || a2.ID != "bash-2" || b.ID != "bash-1" {
		t.Errorf("ids %s %s %s", a.ID, a2.ID, b.ID)
	}
	if j, ok := r.Get("B", "bash-2"); ok {
		t.Errorf("B sees A's job %v", j)
	}
	if j, _ := r.Get("B", "bash-1"); j != b {
		t.Error("B cannot see its own job")
	}
	if len(r.List("A")) != 2 {
		t.Errorf("List(A) = %d", len(r.List("A")))
	}
}

func TestIncrementalReads(t *testing.T) {
	r, _ := newReg(t, Options{})
	gate := t.TempDir() + "/gate"
	cmd := "echo first; echo oops >&2; while [ ! -e " + gate + " ]; do sleep 0.02; done; echo second"
	j, _ := r.Start("s", "bash", cmd, true, bash(cmd))
	for j.stdout.Total() < 6 || j.stderr.Total() < 5 {
		time.Sleep(10 * time.Millisecond)
	}
	if got := j.Read().Text(); got != "first\n[stderr]\noops\n[status: running]" {
		t.Errorf("first read = %q", got)
	}
	if got := j.Read().Text(); got != "(no new output)\n[status: running]" {
		t.Errorf("empty read = %q", got)
	}
	os.WriteFile(gate, nil, 0o600)
	<-j.Done()
	if got := j.Read().Text(); got != "second\n[status: completed, exit code: 0]" {
		t.Errorf("last read = %q", got)
	}
}

func TestLossyReadPointsAtFullOutput(t *testing.T) {
	r, _ := newReg(t, Options{MaxOutputBytes: 16, OutputDir: t.TempDir()})
	cmd := "seq 1 100"
	j, _ := r.Start("s", "bash", cmd, true, bash(cmd))
	<-j.Done()
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
	out, _ := j.Streams()
	if !out.Truncated || out.FullPath != rd.Delta.FullOutputPaths[0] {
		t.Errorf("stream = %+v", out)
	}
}

func TestStartFailures(t *testing.T) {
	t.Run("spawn error unregisters and is returned", func(t *testing.T) {
		r, _ := newReg(t, Options{})
		_, err := r.Start("s", "bash", "x", true, Exec(ExecSpec{Argv: []string{"/nonexistent/prog"}}))
		if err == nil || len(r.List("s")) != 0 {
			t.Errorf("err=%v jobs=%d", err, len(r.List("s")))
		}
	})
	t.Run("registry refuses past MaxJobs", func(t *testing.T) {
		r, _ := newReg(t, Options{MaxJobs: 1})
		if _, err := r.Start("s", "bash", "sleep 5", true, bash("sleep 5")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Start("s", "bash", "true", true, bash("true")); !errors.Is(err, ErrFull) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("runner that never ran reports spawn failure and runner marker", func(t *testing.T) {
		r, ch := newReg(t, Options{EscalationAdvertised: true})
		cause := errors.New("spawn /missing/landlock-run ENOENT")
		j, err := r.Start("s", "bash", "true", true, Failed(cause, &sandbox.Report{Mode: sandbox.ReadOnly, RunnerFailed: true}))
		if err != nil {
			t.Fatal(err)
		}
		n := waitNotice(t, ch)
		if !strings.Contains(n.Text, "[status: killed, killed before exit]") {
			t.Errorf("notice %q", n.Text)
		}
		want := "[stderr]\nspawn failed: spawn /missing/landlock-run ENOENT\n" + sandbox.RunnerFailedMarker(sandbox.ReadOnly) + "\n[status: killed, killed before exit]"
		if got := j.Read().Text(); got != want {
			t.Errorf("read = %q\nwant %q", got, want)
		}
	})
	t.Run("closed registry kills running jobs and refuses new ones", func(t *testing.T) {
		r := New(Options{})
		j, _ := r.Start("s", "bash", "sleep 30", true, bash("sleep 30"))
		if err := r.Close(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		if s, done := j.Settled(); !done || s.Outcome.Signal != "SIGTERM" || j.StopReason() != "the job registry was closed" {
			t.Errorf("settled %+v %v, reason %q", s, done, j.StopReason())
		}
		if _, err := r.Start("s", "bash", "true", true, bash("true")); err == nil {
			t.Error("started after close")
		}
	})
}

func TestWaitForCancelled(t *testing.T) {
	r, _ := newReg(t, Options{})
	j, _ := r.Start("s", "bash", "sleep 5", false, bash("sleep 5"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if settled, err := j.WaitFor(ctx, time.Minute); settled || !errors.Is(err, context.Canceled) {
		t.Errorf("settled=%v err=%v", settled, err)
	}
	j.Kill()
}

func TestKillWhileSpawningIsNotLost(t *testing.T) {
	r, ch := newReg(t, Options{})
	go func() {
		for len(r.List("s")) == 0 {
			time.Sleep(time.Millisecond)
		}
		r.List("s")[0].Kill()
	}()
	inner := bash("sleep 30")
	spawn := func(stdout, stderr io.Writer) (Process, error) {
		for !r.List("s")[0].KillRequested() { // the kill arrives before the process exists
			time.Sleep(time.Millisecond)
		}
		return inner(stdout, stderr)
	}
	if _, err := r.Start("s", "bash", "sleep 30", true, spawn); err != nil {
		t.Fatal(err)
	}
	if n := waitNotice(t, ch); !strings.Contains(n.Text, "[status: killed, signal: SIGTERM]") {
		t.Errorf("notice %q", n.Text)
	}
}

func TestMaxJobsCountsOnlyLiveJobs(t *testing.T) {
	r, ch := newReg(t, Options{MaxJobs: 1})
	j, err := r.Start("s", "bash", "true", true, bash("true"))
	if err != nil {
		t.Fatal(err)
	}
	waitNotice(t, ch)
	<-j.Done()
	if _, err := r.Start("s", "bash", "true", true, bash("true")); err != nil {
		t.Errorf("a settled job still counts: %v", err)
	}
}

func TestPanickingNotifyDoesNotCrash(t *testing.T) {
	r := New(Options{Notify: func(Notice) { panic("receiver broke") }})
	t.Cleanup(func() { r.Close(5 * time.Second) })
	j, err := r.Start("s", "bash", "echo ok", true, bash("echo ok"))
	if err != nil {
		t.Fatal(err)
	}
	<-j.Done()
	time.Sleep(50 * time.Millisecond)
	if got := j.Read().Text(); got != "ok\n[status: completed, exit code: 0]" {
		t.Errorf("read = %q", got)
	}
}
