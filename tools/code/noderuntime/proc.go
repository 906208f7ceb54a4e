package noderuntime

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// The thin /proc layer: a process's parent and CPU time, its descendants,
// and stopping and killing a whole tree.

// statFields returns the fields of /proc/<pid>[/task/<tid>]/stat after the
// command name (field 3, the state, is index 0).
func statFields(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("%s: no command name", path)
	}
	f := bytes.Fields(b[i+1:])
	out := make([]string, len(f))
	for j, x := range f {
		out[j] = string(x)
	}
	return out, nil
}

// parentOf returns the parent pid of pid.
func parentOf(pid int) (int, error) {
	f, err := statFields("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil || len(f) < 2 {
		return 0, fmt.Errorf("parent of %d: %v", pid, err)
	}
	return strconv.Atoi(f[1])
}

// clockTicksPerSecond is USER_HZ, the unit of /proc CPU times (100 on Linux).
const clockTicksPerSecond = 100

// threadCPUMillis returns the user+system CPU time of the main thread of
// pid (the event loop's thread) in milliseconds.
func threadCPUMillis(pid int) (int64, error) {
	p := strconv.Itoa(pid)
	f, err := statFields("/proc/" + p + "/task/" + p + "/stat")
	if err != nil || len(f) < 13 {
		return 0, fmt.Errorf("cpu time of %d: %v", pid, err)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu time of %d: bad stat fields", pid)
	}
	return (utime + stime) * 1000 / clockTicksPerSecond, nil
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
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, err := parentOf(pid); err == nil {
			children[pp] = append(children[pp], pid)
		}
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
