package sandboxtest

import (
	"os"
	"strconv"
)

// InDir returns the processes whose working directory is dir (compared by
// device and inode through /proc/<pid>/cwd, so a process of another mount
// or PID namespace, such as a bwrap sandbox's, is found by its host pid).
// Processes this one may not inspect are left out.
func InDir(dir string) []int {
	want, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if fi, err := os.Stat("/proc/" + e.Name() + "/cwd"); err == nil && os.SameFile(fi, want) {
			out = append(out, pid)
		}
	}
	return out
}
