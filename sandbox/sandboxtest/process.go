package sandboxtest

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/sandbox/procfs"
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

// Marker returns a unique sleep length ("325.<7 digits>"): a command that
// runs `sleep <marker>N` can be found from outside, in any namespace, by
// [Running].
func Marker() string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("325.%d", binary.BigEndian.Uint32(b[:])%1000000+1000000)
}

// Running lists the live processes (neither zombie nor dead) whose command
// line holds marker, one line each (pid, command line, session, parent),
// found through /proc by their host pids.
func Running(marker string) []string {
	procs, _ := procfs.Proc.All()
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
		if err == nil && strings.Contains(string(b), marker) && !p.Ended() {
			out = append(out, fmt.Sprintf("%d %q (session %d, parent %d)", p.PID, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "), p.Session, p.PPID))
		}
	}
	return out
}
