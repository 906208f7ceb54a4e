package sandbox

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// Limits bound one call: resource limits set on its command while it is
// stopped before its first instruction (package spawn, and the in-process
// path), so that nothing it starts escapes them (a child inherits its
// parent's). A zero field sets nothing. They are ours: upstream bounds a
// call by its timeout alone.
type Limits struct {
	// Memory is each process's address space in bytes (RLIMIT_AS): an
	// allocation past it fails (ENOMEM).
	Memory uint64
	// Processes bounds the processes and threads the user runs
	// (RLIMIT_NPROC): a fork past it fails (EAGAIN). Root is not bound by it.
	Processes uint64
	// FileSize is the largest file a process may write, in bytes
	// (RLIMIT_FSIZE): a write past it fails and the writer gets SIGXFSZ.
	FileSize uint64
	// CPU is each process's CPU time in seconds (RLIMIT_CPU): SIGXCPU at the
	// limit, SIGKILL a second later.
	CPU uint64
}

// Rlimit is one resource limit to set.
type Rlimit struct {
	Resource   int
	Soft, Hard uint64
}

// Zero reports whether l sets no limit.
func (l Limits) Zero() bool { return l == Limits{} }

// Rlimits are the resource limits l sets, soft and hard alike but for the
// CPU time, whose hard limit is a second later (SIGXCPU first, then
// SIGKILL). Pure.
func (l Limits) Rlimits() []Rlimit {
	var out []Rlimit
	for _, r := range []struct {
		res int
		v   uint64
	}{{unix.RLIMIT_AS, l.Memory}, {unix.RLIMIT_NPROC, l.Processes}, {unix.RLIMIT_FSIZE, l.FileSize}} {
		if r.v > 0 {
			out = append(out, Rlimit{r.res, r.v, r.v})
		}
	}
	if l.CPU > 0 {
		out = append(out, Rlimit{unix.RLIMIT_CPU, l.CPU, l.CPU + 1})
	}
	return out
}

// Bound names the limit of l that stopped a call, from how it ended: a
// death by SIGXCPU, an exit with 152 (the status bash and bwrap give when a
// child of theirs died of it), or a death by SIGKILL after at least the
// CPU bound of CPU time (the call's, its reaped children's included) is the
// CPU bound; a death by SIGXFSZ, or an exit with 153 that says "File size
// limit exceeded", the file size bound; a failure whose stderr says the
// memory or the processes ran out, with that bound set, that bound. ""
// when no bound of l explains it. Pure.
func (l Limits) Bound(signal string, cpuSeconds float64, exitCode int, stderr string) string {
	low := strings.ToLower(stderr)
	atCPU := l.CPU > 0 && cpuSeconds >= float64(l.CPU)
	switch {
	case l.CPU > 0 && (signal == "SIGXCPU" || signal == "" && exitCode == 128+int(unix.SIGXCPU) || atCPU && signal == "SIGKILL"):
		return fmt.Sprintf("the CPU time bound (%d s, RLIMIT_CPU)", l.CPU)
	case l.FileSize > 0 && (signal == "SIGXFSZ" || signal == "" && exitCode == 128+int(unix.SIGXFSZ) && strings.Contains(low, "file size limit exceeded")):
		return fmt.Sprintf("the file size bound (%d bytes, RLIMIT_FSIZE)", l.FileSize)
	case signal != "" || exitCode == 0:
		return ""
	case l.Memory > 0 && (strings.Contains(low, "cannot allocate") || strings.Contains(low, "out of memory") || strings.Contains(low, "memory exhausted") || strings.Contains(low, "memoryerror")):
		return fmt.Sprintf("the memory bound (%d bytes, RLIMIT_AS)", l.Memory)
	case l.Processes > 0 && (strings.Contains(low, "resource temporarily unavailable") || strings.Contains(low, "cannot fork")):
		return fmt.Sprintf("the process bound (%d processes and threads of the user, RLIMIT_NPROC)", l.Processes)
	}
	return ""
}

// GroupEvents are what a call's cgroup recorded once it ended (package
// sandbox/cgroup): the processes the kernel killed past memory.max
// (memory.events oom_kill), the forks and clones it refused past pids.max
// (pids.events max), and whether the call's CPU time reached its bound,
// whereupon the whole cgroup was killed.
type GroupEvents struct {
	OOMKills, PidsMax uint64
	CPUKilled         bool
}

// GroupPart is what of l a call run in a cgroup of its own still sets as
// resource limits: the file size (a cgroup has no such bound); its memory,
// processes and CPU time are bounded by the cgroup, for the call as a
// whole. Pure.
func (l Limits) GroupPart() Limits { return Limits{FileSize: l.FileSize} }

// GroupBound names the limit of l that stopped a call run in a cgroup of
// its own, from the cgroup's events and how the call ended: the CPU time
// bound when the cgroup was killed for it; else, for a call that failed
// (a signal or a non-zero exit), the memory bound when the kernel killed a
// process of it past memory.max, the process bound when it refused a fork
// past pids.max, and the file size bound as [Limits.Bound] names it. ""
// when none explains it. The vocabulary is [Limits.Bound]'s, each naming
// the cgroup's file. Pure.
func (l Limits) GroupBound(ev GroupEvents, signal string, exitCode int, stderr string) string {
	switch {
	case l.CPU > 0 && ev.CPUKilled:
		return fmt.Sprintf("the CPU time bound (%d s of the call, cgroup cpu.stat)", l.CPU)
	case signal == "" && exitCode == 0:
		return ""
	case l.Memory > 0 && ev.OOMKills > 0:
		return fmt.Sprintf("the memory bound (%d bytes of the call, cgroup memory.max)", l.Memory)
	case l.Processes > 0 && ev.PidsMax > 0:
		return fmt.Sprintf("the process bound (%d processes and threads of the call, cgroup pids.max)", l.Processes)
	}
	return l.GroupPart().Bound(signal, 0, exitCode, stderr)
}
