package spawn

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// sweepEvery is how often, while a call runs, the reaper ends the processes
// it adopted that no running call can claim.
const sweepEvery = 250 * time.Millisecond

// reapWait bounds one sweep: killing, waiting for the killed to be gone and
// looking again (one in uninterruptible sleep, or a chain forking faster
// than it is killed, is left to the next sweep).
const reapWait = 2 * time.Second

// reaper keeps the processes a call starts from outliving it. This process
// is the child subreaper of everything it spawns (PR_SET_CHILD_SUBREAPER), so
// a descendant whose parent exits is re-parented here, never to PID 1. Each
// call's root starts in a session of its own (Start's setsid), whose id is
// the root's pid: a descendant that did not call setsid stays in it. A child
// of this process that spawn did not start is such an adopted orphan; it is
// killed by a sweep unless it is in this process's own session (a child
// some other code started) or in the session of a call still running (it
// belongs to that call). A sweep runs when a call's root exits, before its
// status is collected (the root's pid, its session id, cannot be reused
// meanwhile), and every sweepEvery while any call runs.
type reaper struct {
	once    sync.Once
	err     error
	self    int
	session int

	// forks is held (shared) by every start across the fork and the
	// registration of its pid, and exclusively by a sweep while it judges
	// and kills the children it found: a sweep never takes a new root for
	// an orphan.
	forks sync.RWMutex
	// sweeping serialises sweeps.
	sweeping sync.Mutex

	mu      sync.Mutex
	started map[int]bool // roots spawn started that their Wait has not collected
	running map[int]bool // roots that have not exited: their sessions are live calls
	ticking bool

	// clean (guarded by sweeping): the last sweep ended finding nothing to
	// kill, not at its deadline with victims left.
	clean bool
	// lastPID (guarded by mu) is the pid most recently handed out in this
	// process's PID namespace (procfs.Proc.LastPID; tests replace it).
	lastPID func() (int, error)
	// sweeps counts the sweeps made when a root exited (tests).
	sweeps atomic.Int64
}

var theReaper = &reaper{started: map[int]bool{}, running: map[int]bool{}, clean: true, lastPID: procfs.Proc.LastPID}

// enable makes this process the child subreaper of its descendants, once.
// Without it a call's detached processes would outlive it, so a failure
// refuses every start.
func (r *reaper) enable() error {
	r.once.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			r.err = fmt.Errorf("spawn: cannot make this process the subreaper of what it starts (prctl PR_SET_CHILD_SUBREAPER: %w): the detached processes of a call could outlive it; refusing to run anything", err)
			return
		}
		r.self = os.Getpid()
		r.session, r.err = unix.Getsid(0)
	})
	return r.err
}

// launch runs start (a fork) and registers the root it started.
func (r *reaper) launch(start func() (pid int, err error)) error {
	r.forks.RLock()
	defer r.forks.RUnlock()
	pid, err := start()
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.started[pid], r.running[pid] = true, true
	tick := !r.ticking
	r.ticking = true
	r.mu.Unlock()
	if tick {
		go r.tick()
	}
	return nil
}

// tick sweeps every sweepEvery while any call runs.
func (r *reaper) tick() {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for range t.C {
		r.mu.Lock()
		if len(r.running) == 0 {
			r.ticking = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		r.sweep(0)
	}
}

// exited waits until root pid has exited without collecting its status,
// ends its call (its session is no longer live) and sweeps what it left,
// unless it provably left nothing ([reaper.leftNothing]; capless: the
// command started holding no capability and could gain none).
func (r *reaper) exited(pid int, capless bool) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	r.mu.Lock()
	delete(r.running, pid)
	r.mu.Unlock()
	if capless && r.leftNothing(pid) {
		return
	}
	r.sweeps.Add(1)
	r.sweep(pid)
}

// leftNothing reports whether the call of root pid, which exited, created
// no process and no sweep has anything left to finish: no sweep is running
// and the last one ended clean, and this PID namespace has handed out no
// pid since root's ([quietSince]).
func (r *reaper) leftNothing(root int) bool {
	if !r.sweeping.TryLock() {
		return false
	}
	clean := r.clean
	r.sweeping.Unlock()
	r.mu.Lock()
	lastPID := r.lastPID
	r.mu.Unlock()
	last, err := lastPID()
	return quietSince(root, last, err, clean)
}

// quietSince is the sweep's shortcut, for a call whose command started
// holding no capability and could gain none (the in-process Landlock path:
// every capability dropped, no_new_privs): the call of root, which exited,
// left nothing to sweep when the last pid the namespace handed out (last,
// read without error) is still root's, and the last sweep ended clean.
// Every process or thread created in this PID namespace, or one nested in
// it, moves the last pid (ids are handed out in a cycle, and root's, held
// by its uncollected zombie, cannot be handed out again), and only a holder
// of CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN over the namespace can place
// one without moving it; so the call created no process: none in its
// session, none re-parented here by its exit. Orphans of other calls are
// left to the running calls' sweeps or a later call's, as they would be if
// they were re-parented just after this sweep; a sweep that ended at its
// deadline with victims left makes the next call sweep (clean false).
// Pure.
func quietSince(root, last int, lastErr error, clean bool) bool {
	return lastErr == nil && clean && last == root
}

// keep runs start (a fork by other code: a child this process waits for
// itself) and marks the child it started as not an orphan, so no sweep
// kills it, even in a session of its own; release unmarks it once its
// Wait returned.
func (r *reaper) keep(start func() (pid int, err error)) (release func(), err error) {
	r.forks.RLock()
	defer r.forks.RUnlock()
	pid, err := start()
	if err != nil {
		return func() {}, err
	}
	r.mu.Lock()
	r.started[pid] = true
	r.mu.Unlock()
	return func() { r.collected(pid) }, nil
}

// collected forgets root pid once its Wait collected its status.
func (r *reaper) collected(pid int) {
	r.mu.Lock()
	delete(r.running, pid)
	delete(r.started, pid)
	r.mu.Unlock()
}

// sweep kills the adopted orphans no running call claims and, when a call
// just ended (ended, its root's pid, else 0), every process still in its
// session, wherever it is (a bwrap sandbox's, whose PID namespace is being
// torn down, included); it waits for them to be gone and looks again (an
// orphan's own children are adopted in turn), until none is left or
// reapWait passed.
func (r *reaper) sweep(ended int) { r.sweepUntil(ended, time.Now().Add(reapWait)) }

// sweepUntil is sweep with its deadline; it records whether it ended
// finding nothing to kill (clean) or at the deadline.
func (r *reaper) sweepUntil(ended int, deadline time.Time) {
	r.sweeping.Lock()
	defer r.sweeping.Unlock()
	r.clean = false
	for time.Now().Before(deadline) {
		victims := r.pickAndKill(ended)
		if len(victims) == 0 {
			r.clean = true
			return
		}
		for _, v := range victims {
			v.wait(deadline)
		}
	}
}

// victim is a process a sweep killed: a child of this process (collected
// with wait4) or another member of an ended call's session (watched through
// its pidfd).
type victim struct {
	pid   int
	child bool
	pidfd int
}

// wait waits until the victim is gone (a child: collected), or deadline.
func (v victim) wait(deadline time.Time) {
	if !v.child {
		defer unix.Close(v.pidfd)
		ms := int(time.Until(deadline).Milliseconds())
		if ms > 0 {
			fds := []unix.PollFd{{Fd: int32(v.pidfd), Events: unix.POLLIN}}
			unix.Poll(fds, ms) // readable once the process has ended
		}
		return
	}
	for time.Now().Before(deadline) {
		var ws unix.WaitStatus
		got, err := unix.Wait4(v.pid, &ws, unix.WNOHANG, nil)
		if got == v.pid || err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// pickAndKill SIGKILLs every child of this process that is an orphan no
// running call claims ([orphan]), and every live process of session ended
// (the root itself aside), and returns them. /proc is read without a lock;
// the children are judged again, and killed, holding forks exclusively, so
// a start between its fork and its registration is waited for, never
// taken for an orphan (a child of this process keeps its pid until it is
// collected, and only a sweep collects an orphan).
func (r *reaper) pickAndKill(ended int) []victim {
	procs, _ := procfs.Proc.All()
	var victims []victim
	var children []procfs.Stat
	for _, s := range procs {
		switch {
		case s.PPID == r.self:
			children = append(children, s)
		case ended > 0 && s.Session == ended && s.PID != ended && !s.Ended():
			if v, ok := killMember(s.PID, ended); ok {
				victims = append(victims, v)
			}
		}
	}
	r.forks.Lock()
	defer r.forks.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range children {
		if orphan(s, r.self, r.session, r.started, r.running) {
			unix.Kill(s.PID, unix.SIGKILL)
			victims = append(victims, victim{pid: s.PID, child: true})
		}
	}
	return victims
}

// killMember SIGKILLs process pid through a pidfd once that pidfd is known
// to name a process of session (the pid may have been reused since it was
// read: the session, the ended root's pid, is held by the root's
// uncollected zombie, so no new process has it).
func killMember(pid, session int) (victim, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return victim{}, false
	}
	if s, err := procfs.Proc.Stat(pid); err != nil || s.Session != session {
		unix.Close(fd)
		return victim{}, false
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
		unix.Close(fd)
		return victim{}, false
	}
	return victim{pid: pid, pidfd: fd}, true
}

// orphan reports whether process s is a child of this process (self, in
// session own) that spawn did not start and that no running call claims:
// not in this process's session (a child other code started) nor in the
// session of a root still running. Pure.
func orphan(s procfs.Stat, self, own int, started, running map[int]bool) bool {
	return s.PPID == self && !started[s.PID] && s.Session != own && !running[s.Session]
}
