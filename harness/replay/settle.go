package replay

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// The constructed model's wait for the background jobs (see settler).
const (
	// settleCap bounds the CPU time the jobs' processes may use during one
	// wait: a job that keeps computing is not waited for longer. CPU time,
	// not wall time: on a loaded machine a job that gets no CPU (bwrap has
	// taken seconds to start there) has made no progress, and a wall-clock
	// cap let the model answer before the job did what it would have done
	// (testdata/replay/settle/busy-then-write failed so under a CPU hog).
	settleCap = 2 * time.Second
	// settleCeiling bounds one wait in wall time, for jobs that neither
	// settle nor compute (stuck in uninterruptible sleep, or starved).
	settleCeiling = 30 * time.Second
	// settlePoll is the time between two samples of /proc.
	settlePoll = 5 * time.Millisecond
	// settleEnding bounds, in wall time, the wait for a job whose leader
	// has exited to record its end (its notice queued): on a loaded
	// machine the goroutine that does so may not have run yet when the
	// leader is already gone. A job whose orphans still hold its output
	// stays running until spawn's wait delay passes; it is not waited for
	// longer than this.
	settleEnding = time.Second
)

// settledState reports whether a process in this /proc state lets its job
// count as settled: asleep (S), stopped (T, t), a zombie (Z) or dead (X).
// Anything else, running or runnable (R) and uninterruptible (D) above all,
// is progress still to come.
func settledState(s byte) bool {
	switch s {
	case 'S', 'T', 't', 'Z', 'X':
		return true
	}
	return false
}

// busyMember returns a process of procs that belongs to the session or the
// process group of one of leaders (pids as procs spells them) and has not
// settled.
func busyMember(procs []procfs.Stat, leaders map[int]bool) (procfs.Stat, bool) {
	for _, p := range procs {
		if (leaders[p.Session] || leaders[p.PGrp]) && !settledState(p.State) {
			return p, true
		}
	}
	return procfs.Stat{}, false
}

// pidAt returns the pid at level of an NSpid list (0: the proc mount's
// namespace), if the process is visible there.
func pidAt(nspid []int, level int) (int, bool) {
	if level < 0 || level >= len(nspid) {
		return 0, false
	}
	return nspid[level], true
}

// settler makes the constructed model take as long as a model takes to let
// the background jobs progress: before a reply is served, it waits until
// every process of every running job's session or process group (jobs start
// in a session of their own, confined ones included: bwrap's PID namespace
// keeps the session) has been asleep on two consecutive samples of /proc
// settlePoll apart, or until those processes used cap of CPU time during
// the wait, or until ceiling passed.
type settler struct {
	proc    procfs.Root
	leaders func() []int  // running jobs' leaders, as this process sees them
	cap     time.Duration // settleCap: CPU time
	ceiling time.Duration // settleCeiling: wall time
	ending  time.Duration // settleEnding: wall time
	poll    time.Duration // settlePoll

	self   []int       // this process's NSpid (read once)
	hosts  map[int]int // leader -> its pid in proc's namespace
	capped int         // waits that reached the cap or the ceiling
	busy   string      // what was still busy at the last capped wait
	why    string      // which bound ended the last capped wait
}

func newSettler(proc procfs.Root, leaders func() []int) *settler {
	return &settler{proc: proc, leaders: leaders, cap: settleCap, ceiling: settleCeiling, ending: settleEnding, poll: settlePoll, hosts: map[int]int{}}
}

// wait returns once the running jobs settled, the cap passed (counted in
// capped) or ctx ended; an error means /proc could not be read.
func (s *settler) wait(ctx context.Context) error {
	deadline := time.Now().Add(s.ceiling)
	base := map[int]int64{} // CPU ticks of each member when first seen
	quiet := 0
	var endingSince time.Time // when a job was first seen ended but not done
	for {
		busy, none, used, gone, err := s.sample(base)
		if err != nil {
			return fmt.Errorf("the constructed model's wait for the background jobs: %w", err)
		}
		if busy == "" && gone != 0 {
			if endingSince.IsZero() {
				endingSince = time.Now()
			}
			if time.Since(endingSince) < s.ending {
				busy = fmt.Sprintf("job leader %d (ended, its end not recorded yet)", gone)
			}
		}
		switch {
		case none:
			return nil // no job runs: nothing to wait for
		case busy == "":
			if quiet++; quiet == 2 {
				return nil
			}
		default:
			quiet = 0
			why := ""
			switch {
			case used >= s.cap:
				why = fmt.Sprintf("computed for %s of CPU time", s.cap)
			case !time.Now().Before(deadline):
				why = fmt.Sprintf("ran for %s without settling", s.ceiling)
			}
			if why != "" {
				s.capped++
				s.busy, s.why = busy, why
				return nil
			}
		}
		select {
		case <-time.After(s.poll):
		case <-ctx.Done():
			return nil
		}
	}
}

// sample reads /proc once: busy names a process of a running job that has
// not settled ("" when every one has); none reports that no job runs; used
// is the CPU time the jobs' processes used since base recorded them (a
// process first seen now is recorded with none used before: it started
// during the wait, or a sample ago).
func (s *settler) sample(base map[int]int64) (busy string, none bool, used time.Duration, gone int, err error) {
	leaders := s.leaders()
	if len(leaders) == 0 {
		return "", true, 0, 0, nil
	}
	if s.self == nil {
		if s.self, err = s.proc.NSpid("self"); err != nil {
			return "", false, 0, 0, err
		}
	}
	procs, err := s.proc.All()
	if err != nil {
		return "", false, 0, 0, err
	}
	running := map[int]bool{}
	for _, l := range leaders {
		running[l] = true
	}
	for l := range s.hosts {
		if !running[l] { // settled: its pid may be reused
			delete(s.hosts, l)
		}
	}
	if err := s.translate(leaders, procs); err != nil {
		return "", false, 0, 0, err
	}
	hosts := map[int]bool{}
	for _, h := range s.hosts {
		hosts[h] = true
	}
	used, gone = cpuUsed(procs, hosts, base), goneLeader(leaders, s.hosts, procs)
	if p, ok := busyMember(procs, hosts); ok {
		return p.String(), false, used, gone, nil
	}
	return "", false, used, gone, nil
}

// goneLeader returns a leader of a job still running whose process is
// gone from procs (exited, reaped, or a zombie: not found by its pid in
// proc's namespace, hosts, or found dead), before the job recorded its
// end; 0 when every leader's process lives.
func goneLeader(leaders []int, hosts map[int]int, procs []procfs.Stat) int {
	alive := map[int]bool{}
	for _, p := range procs {
		if p.State != 'Z' && p.State != 'X' {
			alive[p.PID] = true
		}
	}
	for _, l := range leaders {
		if h, ok := hosts[l]; !ok || !alive[h] {
			return l
		}
	}
	return 0
}

// cpuUsed is the CPU time the members of leaders' sessions or groups used
// since base recorded them; members seen for the first time are recorded.
func cpuUsed(procs []procfs.Stat, leaders map[int]bool, base map[int]int64) time.Duration {
	var ticks int64
	for _, p := range procs {
		if !leaders[p.Session] && !leaders[p.PGrp] {
			continue
		}
		now := p.UTime + p.STime
		first, seen := base[p.PID]
		if !seen {
			base[p.PID] = now
			continue
		}
		ticks += max(0, now-first)
	}
	return time.Duration(ticks) * time.Second / procfs.ClockTicksPerSecond
}

// translate finds the pids in proc's namespace of the leaders not known yet:
// each is a child of this process whose NSpid, at this process's level, is
// the leader. A leader that already ended (its job still holds its output
// until spawn's wait delay passes) is not found: only its orphans are left,
// and they are not waited for.
func (s *settler) translate(leaders []int, procs []procfs.Stat) error {
	level := len(s.self) - 1
	want := map[int]bool{}
	for _, l := range leaders {
		if _, ok := s.hosts[l]; !ok {
			want[l] = true
		}
	}
	for _, p := range procs {
		if len(want) == 0 {
			return nil
		}
		if p.PPID != s.self[0] {
			continue
		}
		ns, err := s.proc.NSpid(strconv.Itoa(p.PID))
		if procfs.Gone(err) {
			continue
		}
		if err != nil {
			return err
		}
		if l, ok := pidAt(ns, level); ok && want[l] {
			s.hosts[l] = p.PID
			delete(want, l)
		}
	}
	return nil
}
