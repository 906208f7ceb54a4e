package noderuntime

import (
	"fmt"
	"syscall"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// The thin /proc layer: a process's parent and CPU time, its descendants,
// and stopping and killing a whole tree.

// parentOf returns the parent pid of pid.
func parentOf(pid int) (int, error) {
	s, err := procfs.Proc.Stat(pid)
	if err != nil {
		return 0, fmt.Errorf("parent of %d: %v", pid, err)
	}
	return s.PPID, nil
}

// threadCPUMillis returns the user+system CPU time of the main thread of
// pid (the event loop's thread) in milliseconds.
func threadCPUMillis(pid int) (int64, error) {
	s, err := procfs.Proc.ThreadStat(pid, pid)
	if err != nil {
		return 0, fmt.Errorf("cpu time of %d: %v", pid, err)
	}
	return (s.UTime + s.STime) * 1000 / procfs.ClockTicksPerSecond, nil
}

// isDescendant reports whether pid is root or below it (a few levels: the
// runner, bwrap's own child).
func isDescendant(pid, root int) bool {
	for i := 0; i < 8 && pid > 1; i++ {
		if pid == root {
			return true
		}
		pp, err := parentOf(pid)
		if err != nil {
			return false
		}
		pid = pp
	}
	return pid == root
}

// descendants lists every process below root, from one scan of /proc.
func descendants(root int) []int {
	procs, _ := procfs.Proc.All()
	children := map[int][]int{}
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p.PID)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// killTree stops root and everything below it (repeating the scan until no
// new process appears, so a forking descendant cannot outrun it), then
// kills them all. A descendant that left the tree before the first scan
// (re-parented to init) is out of its reach.
func killTree(root int) {
	seen := map[int]bool{root: true}
	_ = syscall.Kill(root, syscall.SIGSTOP)
	for round := 0; round < 16; round++ {
		found := false
		for _, p := range descendants(root) {
			if !seen[p] {
				seen[p] = true
				found = true
				_ = syscall.Kill(p, syscall.SIGSTOP)
			}
		}
		if !found {
			break
		}
	}
	for p := range seen {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}
