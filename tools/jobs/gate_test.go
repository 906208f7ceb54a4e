package jobs

import (
	"errors"
	"testing"
	"time"

	"github.com/dshsim/dshsim/sandbox"
)

// queued waits until g holds a settlement (a process ended unobserved).
func queued(t *testing.T, g *Gate) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g.mu.Lock()
		n := len(g.queue)
		g.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the process did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestGateHoldsOutputAndExitUntilAYield: under a gate, output and the exit
// of a job are observed only at a Pump: before it, a read shows no new
// output and the job running, and no notice is sent.
func TestGateHoldsOutputAndExitUntilAYield(t *testing.T) {
	g := NewGate()
	r, ch := newReg(t, Options{Gate: g})
	j := start(t, r, "s", "echo A")
	queued(t, g)
	if got := j.Read().Text(); got != "(no new output)\n[status: running]" {
		t.Errorf("read before a yield = %q", got)
	}
	noNotice(t, ch)
	g.Pump()
	if n := waitNotice(t, ch); n.JobID != "bash-1" {
		t.Errorf("notice %+v", n)
	}
	if got := j.Read().Text(); got != "A\n[status: completed, exit code: 0]" {
		t.Errorf("read after a yield = %q", got)
	}
}

// TestGateKeepsAKilledJobStopping: job_kill right after a start, then a read
// with no yield between (upstream's bash-background-jobs): the job is
// stopping and its output unseen, although the process is gone.
func TestGateKeepsAKilledJobStopping(t *testing.T) {
	g := NewGate()
	r, ch := newReg(t, Options{Gate: g})
	j := start(t, r, "s", "echo LONG_START; sleep 60")
	for deadline := time.Now().Add(20 * time.Second); j.stdout.Total() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no output")
		}
	}
	if !j.Cancel("job_kill") {
		t.Fatal("the job had finished")
	}
	queued(t, g)
	if got := j.Read().Text(); got != "(no new output)\n[status: stopping]" {
		t.Errorf("read = %q", got)
	}
	g.Pump()
	if got := j.Read().Text(); got != "LONG_START\n[status: killed, signal: SIGTERM]" {
		t.Errorf("read after a yield = %q", got)
	}
	noNotice(t, ch) // job_kill reported it
}

// TestGateWaitYields: a job_output wait is a yield: it observes the exit
// that happened before it began, which reports the job, so no notice
// follows (upstream's bash-job-kill-settled).
func TestGateWaitYields(t *testing.T) {
	g := NewGate()
	r, ch := newReg(t, Options{Gate: g})
	j := start(t, r, "s", "echo partial; exit 7")
	queued(t, g)
	if ok, err := j.WaitFor(t.Context(), 10*time.Second); !ok || err != nil {
		t.Fatalf("wait = %v, %v", ok, err)
	}
	if got := j.Read().Text(); got != "partial\n[status: completed, exit code: 7]" {
		t.Errorf("read = %q", got)
	}
	noNotice(t, ch)
}

// TestGateSpawnFailureIsNotHeld: a process that never started settles at
// once under a gate too (Node reports a failed spawn on the next tick).
func TestGateSpawnFailureIsNotHeld(t *testing.T) {
	r, ch := newReg(t, Options{Gate: NewGate()})
	j, err := r.Start(spec("s", "true"), Failed(errors.New("Error: spawn /x ENOENT"), &sandbox.Report{Mode: sandbox.ReadOnly, RunnerFailed: true}))
	if err != nil {
		t.Fatal(err)
	}
	waitNotice(t, ch)
	if got := j.Read().Text(); got != "[stderr]\nspawn failed: Error: spawn /x ENOENT\n"+sandbox.RunnerFailedMarker(sandbox.ReadOnly)+"\n[status: killed, killed before exit]" {
		t.Errorf("read = %q", got)
	}
}

// TestGateCloseYields: closing the registry observes the settlements it
// waits for (it does not wait for a yield that never comes).
func TestGateCloseYields(t *testing.T) {
	g := NewGate()
	r := NewRegistry(Options{Gate: g})
	j, err := r.Start(spec("s", "sleep 60"), bash("sleep 60"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if st, _ := j.StatusDetail(); st != StatusKilled {
		t.Errorf("status after close = %q", st)
	}
}

// TestGateKeepsTheTailOfUnreadOutput: output observed but not read is kept
// up to MaxOutputBytes (the tail); a read of a cut tail is lossy.
func TestGateKeepsTheTailOfUnreadOutput(t *testing.T) {
	if s, cut := keepTail("aé", 2); s != "é" || !cut {
		t.Errorf("keepTail = %q, %v", s, cut)
	}
	if s, cut := keepTail("aéb", 2); s != "b" || !cut { // never from inside a rune
		t.Errorf("keepTail = %q, %v", s, cut)
	}
	if s, cut := keepTail("ab", 2); s != "ab" || cut {
		t.Errorf("keepTail = %q, %v", s, cut)
	}
}

// TestGatePumpsOnlyLiveJobs: a yield pulls the output of the jobs still
// running; a job that settled (its settlement observed, or a process that
// never started) is dropped from the gate, however many yields follow.
func TestGatePumpsOnlyLiveJobs(t *testing.T) {
	g := NewGate()
	r, ch := newReg(t, Options{Gate: g})
	done := start(t, r, "s", "echo A")
	running := start(t, r, "s", "echo B; exec sleep 60")
	if _, err := r.Start(spec("s", "true"), Failed(errors.New("Error: spawn /x ENOENT"), nil)); err != nil {
		t.Fatal(err)
	}
	waitNotice(t, ch) // the failed start's
	queued(t, g)
	for deadline := time.Now().Add(20 * time.Second); running.stdout.Total() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no output")
		}
	}
	g.Pump() // observes A's exit
	waitNotice(t, ch)
	g.Pump()
	g.mu.Lock()
	live := len(g.live)
	g.mu.Unlock()
	if live != 1 {
		t.Errorf("the gate pulls %d jobs, want 1 (the running one)", live)
	}
	if got := running.Read().Text(); got != "B\n[status: running]" {
		t.Errorf("the running job's read = %q", got)
	}
	if got := done.Read().Text(); got != "A\n[status: completed, exit code: 0]" {
		t.Errorf("the settled job's read = %q", got)
	}
}
