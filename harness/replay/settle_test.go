package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox/procfs"
)

// TestSettledState: only a process that can make no progress on its own
// lets its job count as settled.
func TestSettledState(t *testing.T) {
	for s, want := range map[byte]bool{'S': true, 'T': true, 't': true, 'Z': true, 'X': true, 'R': false, 'D': false, 'I': false, 'W': false} {
		if got := settledState(s); got != want {
			t.Errorf("settledState(%c) = %v, want %v", s, got, want)
		}
	}
}

// TestBusyMember: a busy process counts when its session or its process
// group is a leader's; a busy stranger and a sleeping member do not.
func TestBusyMember(t *testing.T) {
	leaders := map[int]bool{100: true}
	tests := []struct {
		name  string
		procs []procfs.Stat
		want  int // busy pid, 0 for none
	}{
		{"sleeping members", []procfs.Stat{{PID: 100, State: 'S', PGrp: 100, Session: 100}, {PID: 101, State: 'S', PGrp: 100, Session: 100}}, 0},
		{"busy by session", []procfs.Stat{{PID: 101, State: 'R', PGrp: 101, Session: 100}}, 101},
		{"busy by group", []procfs.Stat{{PID: 102, State: 'D', PGrp: 100, Session: 7}}, 102},
		{"busy stranger", []procfs.Stat{{PID: 200, State: 'R', PGrp: 200, Session: 200}}, 0},
		{"zombie member", []procfs.Stat{{PID: 103, State: 'Z', PGrp: 100, Session: 100}}, 0},
	}
	for _, tt := range tests {
		p, ok := busyMember(tt.procs, leaders)
		if got := map[bool]int{true: p.PID}[ok]; got != tt.want {
			t.Errorf("%s: busy %d (%v), want %d", tt.name, got, ok, tt.want)
		}
	}
}

func TestPidAt(t *testing.T) {
	ns := []int{812, 23, 1}
	for _, tt := range []struct {
		level int
		want  int
		ok    bool
	}{{0, 812, true}, {2, 1, true}, {3, 0, false}, {-1, 0, false}} {
		if got, ok := pidAt(ns, tt.level); got != tt.want || ok != tt.ok {
			t.Errorf("pidAt(%v, %d) = %d, %v; want %d, %v", ns, tt.level, got, ok, tt.want, tt.ok)
		}
	}
}

// fakeProc is a constructed proc mount: this process is pid 50, the one job
// leader pid 200 (its child, in its own session).
type fakeProc struct {
	t   *testing.T
	dir string
}

func newFakeProc(t *testing.T) fakeProc {
	f := fakeProc{t: t, dir: t.TempDir()}
	for pid, nspid := range map[string]string{"self": "50", "200": "200"} {
		if err := os.MkdirAll(filepath.Join(f.dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.dir, pid, "status"), []byte("Name:\tx\nNSpid:\t"+nspid+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// set writes the leader's stat line: its state and CPU ticks (user time).
// The file is replaced by a rename, so a reader never sees half a line.
func (f fakeProc) set(state byte, ticks int) {
	line := fmt.Sprintf("200 (bash) %c 50 200 200 0 -1 4194304 0 0 0 0 %d 0 0 0 20 0 1 0 1\n", state, ticks)
	tmp := filepath.Join(f.dir, "200", "stat.tmp")
	if err := os.WriteFile(tmp, []byte(line), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.dir, "200", "stat")); err != nil {
		f.t.Fatal(err)
	}
}

// waitAsync runs s.wait on its own goroutine; the channel yields its error.
func waitAsync(s *settler) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.wait(context.Background()) }()
	return done
}

// TestSettleWaitsForAStarvedJob: a job that is runnable but gets no CPU (on
// a loaded machine) has made no progress: the wait goes on past the cap in
// wall time, and ends when the job settles, not capped. A wall-clock cap
// returned at 100ms here (busy-then-write failed so under a CPU hog).
func TestSettleWaitsForAStarvedJob(t *testing.T) {
	f := newFakeProc(t)
	f.set('R', 7)
	s := newSettler(procfs.Root(f.dir), func() []int { return []int{200} })
	s.cap, s.ceiling = 100*time.Millisecond, 30*time.Second
	done := waitAsync(s)
	select {
	case err := <-done:
		t.Fatalf("the wait for a starved job returned (capped %d, %s): %v", s.capped, s.why, err)
	case <-time.After(500 * time.Millisecond): // five times the cap, in wall time
	}
	f.set('S', 7)
	select {
	case err := <-done:
		if err != nil || s.capped != 0 {
			t.Errorf("wait: %v, capped %d (%s), want settled", err, s.capped, s.why)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the wait did not end within 30s of the job settling")
	}
}

// TestSettleCapsAComputingJob: a job that keeps computing is waited for
// until it used the cap of CPU time; one that neither computes nor settles
// until the ceiling.
func TestSettleCapsAComputingJob(t *testing.T) {
	t.Run("computing", func(t *testing.T) {
		f := newFakeProc(t)
		f.set('R', 0)
		s := newSettler(procfs.Root(f.dir), func() []int { return []int{200} })
		s.cap, s.ceiling = 100*time.Millisecond, 30*time.Second
		done := waitAsync(s)
		stop := make(chan struct{})
		defer close(stop)
		go func() { // 1 tick (10ms of CPU) per 10ms: one busy CPU
			for ticks := 1; ; ticks++ {
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
					f.set('R', ticks)
				}
			}
		}()
		select {
		case err := <-done:
			if err != nil || s.capped != 1 || s.why != "computed for 100ms of CPU time" || s.busy != "pid 200 (bash) state R" {
				t.Errorf("wait: %v, capped %d (%s; %s)", err, s.capped, s.why, s.busy)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the wait for a computing job did not end within 30s")
		}
	})
	t.Run("stuck", func(t *testing.T) {
		f := newFakeProc(t)
		f.set('D', 3)
		s := newSettler(procfs.Root(f.dir), func() []int { return []int{200} })
		s.cap, s.ceiling = time.Second, 200*time.Millisecond
		select {
		case err := <-waitAsync(s):
			if err != nil || s.capped != 1 || s.why != "ran for 200ms without settling" {
				t.Errorf("wait: %v, capped %d (%s)", err, s.capped, s.why)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the wait for a stuck job did not end at its ceiling")
		}
	})
}

// TestSettleSkipsAnExitingLeader: a job leader caught while it exits shows
// pids of 0 on its NSpid line; it is a leader that ended, not a broken proc
// file (the wait failed the replay on it).
func TestSettleSkipsAnExitingLeader(t *testing.T) {
	f := newFakeProc(t)
	f.set('Z', 7)
	if err := os.WriteFile(filepath.Join(f.dir, "200", "status"), []byte("Name:\tx\nNSpid:\t0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSettler(procfs.Root(f.dir), func() []int { return []int{200} })
	s.cap, s.ceiling, s.ending = 100*time.Millisecond, 30*time.Second, 100*time.Millisecond
	if err := waittest.Recv(t, waitAsync(s), "the wait to end"); err != nil {
		t.Fatalf("wait: %v", err)
	}
}

// TestSettleWaitsForAnEndedJobToRecordItsEnd: a job whose leader is gone
// (exited and reaped, or a zombie) while the job still runs has not yet
// recorded its end, so its notice is not queued: the wait goes on until the
// job is done (on a loaded machine the model answered first, and a
// recorded notice came a step late), at most settleEnding, and such a wait
// is not a capped one.
func TestSettleWaitsForAnEndedJobToRecordItsEnd(t *testing.T) {
	for _, gone := range []string{"reaped", "zombie"} {
		t.Run(gone, func(t *testing.T) {
			f := newFakeProc(t)
			if gone == "reaped" {
				if err := os.RemoveAll(filepath.Join(f.dir, "200")); err != nil {
					t.Fatal(err)
				}
			} else {
				f.set('Z', 7)
			}
			var done atomic.Bool
			s := newSettler(procfs.Root(f.dir), func() []int {
				if done.Load() {
					return nil
				}
				return []int{200}
			})
			s.cap, s.ceiling, s.ending = 100*time.Millisecond, 30*time.Second, 30*time.Second
			wait := waitAsync(s)
			select {
			case err := <-wait:
				t.Fatalf("the wait returned before the ended job was done (%v)", err)
			case <-time.After(300 * time.Millisecond):
			}
			done.Store(true)
			if err := waittest.Recv(t, wait, "the wait to end once the job is done"); err != nil || s.capped != 0 {
				t.Errorf("wait: %v, capped %d (%s)", err, s.capped, s.why)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		f := newFakeProc(t)
		if err := os.RemoveAll(filepath.Join(f.dir, "200")); err != nil {
			t.Fatal(err)
		}
		s := newSettler(procfs.Root(f.dir), func() []int { return []int{200} })
		s.ending = 100 * time.Millisecond
		start := time.Now()
		if err := waittest.Recv(t, waitAsync(s), "the wait to end at settleEnding"); err != nil || s.capped != 0 {
			t.Errorf("wait: %v, capped %d (%s)", err, s.capped, s.why)
		}
		if took := time.Since(start); took < s.ending {
			t.Errorf("the wait for an ended job returned after %s, before its bound %s", took, s.ending)
		}
	})
}
