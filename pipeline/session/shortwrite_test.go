package session

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const shortWriteEnv = "DSHSIM_SESSION_SHORT_WRITE_HELPER"

func init() {
	if path := os.Getenv(shortWriteEnv); path != "" {
		os.Exit(shortWriteHelper(path))
	}
}

// shortWriteHelper is a child process: it appends one event while
// RLIMIT_FSIZE cuts that write short (a full disk does the same), then lifts
// the limit and appends a second event with the same open Log. It prints
// "short:<error>" for the first append and exits non-zero on any other
// failure.
func shortWriteHelper(path string) int {
	l, err := Open(path, WithClock(fixedClock))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	fi, err := os.Stat(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Room for 20 more bytes: the event line is longer, so write(2) is short.
	lim := unix.Rlimit{Cur: uint64(fi.Size()) + 20, Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = l.Append("sandbox/mode", map[string]string{"mode": "workspace-write"})
	fmt.Printf("short:%v\n", err)
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err == nil {
		fmt.Fprintln(os.Stderr, "the cut append reported success")
		return 1
	}
	if _, err := l.Append("sandbox/mode", map[string]string{"mode": "read-only"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestAppendAfterOwnShortWriteIsNotLost: when this Log's own write(2) was cut
// short (disk full, file size limit), the next append through the same Log
// must terminate the torn bytes first, so the next event stays decodable (a
// narrowing sandbox/mode that reported success must not vanish from the fold).
func TestAppendAfterOwnShortWriteIsNotLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := Create(path, Header{ID: "sess"}, WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append("sandbox/mode", map[string]string{"mode": "danger-full-access"}); err != nil {
		t.Fatal(err)
	}
	l.Close()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), shortWriteEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s\nstdout: %s", err, stderr.String(), out)
	}
	if !strings.Contains(string(out), "short write") {
		t.Fatalf("the first append was not cut short by RLIMIT_FSIZE: %s", out)
	}

	c, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	last, ok := LastField(c.Events, "sandbox/mode", "mode")
	if !ok || last != "read-only" {
		raw, _ := os.ReadFile(path)
		t.Fatalf("last sandbox/mode = %q (ok %v), want read-only; bad lines %v; file:\n%s", last, ok, c.Bad, raw)
	}
	if len(c.Bad) != 1 {
		t.Errorf("want exactly the torn line reported, got %v", c.Bad)
	}
}
