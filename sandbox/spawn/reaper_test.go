//go:build linux

package spawn

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestOrphan is the reaper's rule: a child of this process that spawn did
// not start is killed unless it is in this process's session or in a
// running call's session.
func TestOrphan(t *testing.T) {
	const self, own = 100, 100
	started := map[int]bool{200: true, 300: true}
	running := map[int]bool{200: true} // 300 exited, not yet collected
	tests := []struct {
		name string
		s    procfs.Stat
		want bool
	}{
		{"a running root", procfs.Stat{PID: 200, PPID: self, Session: 200}, false},
		{"an exited root its Wait has not collected", procfs.Stat{PID: 300, PPID: self, Session: 300}, false},
		{"a child other code started in this session", procfs.Stat{PID: 400, PPID: self, Session: own}, false},
		{"a running call's double-forked process", procfs.Stat{PID: 500, PPID: self, Session: 200}, false},
		{"an ended call's double-forked process", procfs.Stat{PID: 600, PPID: self, Session: 300}, true},
		{"a detached daemon (its own session)", procfs.Stat{PID: 700, PPID: self, Session: 700}, true},
		{"a process that is not this process's child", procfs.Stat{PID: 800, PPID: 1, Session: 300}, false},
	}
	for _, tc := range tests {
		if got := orphan(tc.s, self, own, started, running); got != tc.want {
			t.Errorf("%s: orphan = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// leavers are the ways a command leaves processes behind: a plain
// background child, a double fork, a double fork into its own session (a
// detached daemon), setsid's own fork, and a daemon that sets itself up as
// a subreaper's child.
func leavers(m string) string {
	return strings.Join([]string{
		"sleep " + m + "1 &",
		"(sleep " + m + "2 &)",
		"(setsid sleep " + m + "3 </dev/null >/dev/null 2>&1 &)",
		"setsid -f sleep " + m + "4",
		"(nohup sh -c 'sleep " + m + "5' </dev/null >/dev/null 2>&1 &)",
		"exit 0",
	}, "\n")
}

// TestNothingOutlivesItsCall: whatever a call leaves running (a background
// child, double forks, detached daemons in sessions of their own) has ended
// when the call's result is out, on every backend and unconfined (an
// escalated danger-full-access call), checked from /proc; and a detached
// writer of an unconfined call never writes after the call returned.
func TestNothingOutlivesItsCall(t *testing.T) {
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock, inproc.Backend, string(sandbox.DangerFullAccess)} {
		t.Run(backend, func(t *testing.T) {
			ws, out := varTmpDir(t, "dshsim-ws-"), varTmpDir(t, "dshsim-out-")
			req := Request{Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}}
			if backend != string(sandbox.DangerFullAccess) {
				req.Confiner, req.Policy.Mode = confiner(t, backend), sandbox.WorkspaceWrite
			}
			m := sandboxtest.Marker()
			late := filepath.Join(out, "late")
			req.Argv = bash("(setsid sh -c 'sleep 1; echo late > " + late + "' </dev/null >/dev/null 2>&1 &)\n" + leavers(m))
			res, err := Run(context.Background(), req)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if left := sandboxtest.Running(m); len(left) > 0 {
				t.Errorf("left running after the call returned:\n%s", strings.Join(left, "\n"))
			}
			time.Sleep(1500 * time.Millisecond)
			if _, err := os.Stat(late); err == nil {
				t.Errorf("a detached process of the call wrote %s after the call returned", late)
			}
			if left := sandboxtest.Running(m); len(left) > 0 {
				t.Errorf("left running a while after the call returned:\n%s", strings.Join(left, "\n"))
			}
		})
	}
}

// TestARunningCallKeepsWhatStaysInItsSession: a background call's
// double-forked process lives as long as the call (it stays in the call's
// session), and ends with it; a detached daemon of a running call (a session
// of its own, its parent gone) cannot be told apart from any other call's
// and ends within a sweep.
func TestARunningCallKeepsWhatStaysInItsSession(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	m := sandboxtest.Marker()
	p, err := Start(context.Background(), Request{Argv: bash("(sleep " + m + "1 &); (setsid sleep " + m + "2 </dev/null >/dev/null 2>&1 &); exec sleep " + m + "0"),
		Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); waittest.Closed(t, p.Done(), "the killed call") })
	deadline := time.Now().Add(10 * time.Second)
	for len(sandboxtest.Running(m+"1")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(3 * sweepEvery)
	if len(sandboxtest.Running(m+"1")) != 1 {
		t.Errorf("the running call's double-forked process: %q, want it alive", sandboxtest.Running(m+"1"))
	}
	if left := sandboxtest.Running(m + "2"); len(left) > 0 {
		t.Errorf("the running call's detached daemon outlived %d sweeps: %q", 3, left)
	}
	p.Kill()
	waittest.Closed(t, p.Done(), "the killed call")
	if left := sandboxtest.Running(m); len(left) > 0 {
		t.Errorf("left running after the call was killed:\n%s", strings.Join(left, "\n"))
	}
}

// TestQuietSince is the sweep's shortcut: only when the last pid handed out
// is still the exited root's (read without error) and the last sweep ended
// clean.
func TestQuietSince(t *testing.T) {
	const root = 4000
	tests := []struct {
		name    string
		last    int
		lastErr error
		clean   bool
		want    bool
	}{
		{"nothing created since the root", root, nil, true, true},
		{"a process created after the root", root + 1, nil, true, false},
		{"ids wrapped past the root", root - 1, nil, true, false},
		{"the last pid cannot be read", root, errors.New("no /proc/loadavg"), true, false},
		{"the last sweep left victims", root, nil, false, false},
	}
	for _, tc := range tests {
		if got := quietSince(root, tc.last, tc.lastErr, tc.clean); got != tc.want {
			t.Errorf("%s: quietSince = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLeftNothing: the shortcut is asked only when no sweep is running and
// the last one ended clean, and the last pid is the root's.
func TestLeftNothing(t *testing.T) {
	const root = 4000
	for _, tc := range []struct {
		name            string
		last            int
		clean, sweeping bool
		want            bool
	}{
		{"clean, nothing created", root, true, false, true},
		{"a process created", root + 1, true, false, false},
		{"the last sweep left victims", root, false, false, false},
		{"a sweep is running", root, true, true, false},
	} {
		r := &reaper{clean: tc.clean, lastPID: func() (int, error) { return tc.last, nil }}
		if tc.sweeping {
			r.sweeping.Lock()
		}
		if got := r.leftNothing(root); got != tc.want {
			t.Errorf("%s: leftNothing = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSweepRecordsHowItEnded: a sweep that ends at its deadline leaves the
// reaper unclean (the next call sweeps); one that finds nothing to kill
// leaves it clean.
func TestSweepRecordsHowItEnded(t *testing.T) {
	r := theReaper
	if err := r.enable(); err != nil {
		t.Fatal(err)
	}
	r.sweepUntil(0, time.Now().Add(-time.Second))
	if r.clean {
		t.Error("a sweep that ended at its deadline left the reaper clean")
	}
	r.sweepUntil(0, time.Now().Add(reapWait))
	if !r.clean {
		t.Error("a sweep that found nothing to kill left the reaper unclean")
	}
}

// TestSweepShortcut: a call whose command holds no capability (the
// in-process path) and created no process is not swept, but a command that
// may hold capabilities (unconfined) is, and its sweep kills an orphan
// waiting (a child of this process in a session of its own), with the last
// pid made the root's, as if nothing else forked meanwhile. With the real
// last pid, the shortcut is taken for some plain calls of the in-process
// path. (A call that leaves processes is swept: TestNothingOutlivesItsCall.)
func TestSweepShortcut(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	c := confiner(t, inproc.Backend)
	ws := varTmpDir(t, "dshsim-ws-")
	real := theReaper.lastPID
	t.Cleanup(func() { setLastPID(real) })
	run := func(confined, fake bool, argv ...string) (swept, orphanLeft bool) {
		t.Helper()
		o := exec.Command("sleep", "30")
		o.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { o.Process.Kill(); o.Wait() }()
		req := Request{Argv: argv, Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}}
		if confined {
			req.Confiner, req.Policy.Mode = c, sandbox.WorkspaceWrite
		}
		before := theReaper.sweeps.Load()
		p, err := Start(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if fake {
			pid := p.cmd.Process.Pid
			setLastPID(func() (int, error) { return pid, nil })
		}
		if res, err := p.Wait(); err != nil || res.ExitCode != 0 {
			t.Fatalf("%q: %+v, %v", argv, res, err)
		}
		return theReaper.sweeps.Load() > before, procfs.Alive(o.Process.Pid)
	}
	// Sweeps are counted process-wide: a sweep of a call an earlier test
	// left settling counts too, so the shortcut must be missed three times
	// in a row to fail (a reaper that never takes it is swept every time).
	missed := 0
	for missed < 3 {
		if swept, _ := run(true, true, "sleep", "0.1"); !swept {
			break
		}
		missed++
	}
	if missed == 3 {
		t.Error("an in-process call that created nothing was swept, three times in a row")
	}
	if swept, left := run(false, true, "sleep", "0.1"); !swept || left {
		t.Errorf("an unconfined call that created nothing: swept %v, the waiting orphan left running %v; want it swept and the orphan killed", swept, left)
	}
	setLastPID(real)
	for try := 0; ; try++ {
		if swept, _ := run(true, false, "/bin/true"); !swept {
			break
		}
		if try == 30 {
			t.Fatalf("30 in-process calls of /bin/true were all swept: the shortcut is never taken")
		}
	}
}

// setLastPID replaces the reaper's reader of the last pid.
func setLastPID(f func() (int, error)) {
	theReaper.mu.Lock()
	theReaper.lastPID = f
	theReaper.mu.Unlock()
}
