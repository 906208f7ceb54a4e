package probe_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/escape/probe"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"no operation is a usage error", nil, probe.ExitUsage, ""},
		{"an unknown operation is a usage error", []string{"teleport", f}, probe.ExitUsage, ""},
		{"a flag is an unknown operation", []string{"-x"}, probe.ExitUsage, ""},
		{"a wrong argument count is a usage error", []string{"write"}, probe.ExitUsage, ""},
		{"-h is the help, exit 0", []string{"-h"}, probe.ExitOK, ""},
		{"a write that works says ok", []string{"write", f}, probe.ExitOK, "write: ok\n"},
		{"a failing syscall prints its errno name", []string{"unlink", filepath.Join(dir, "missing")}, probe.ExitErrno, "unlink: ENOENT (no such file or directory)\n"},
		{"rename has no copy fallback across devices", []string{"rename", f, "/proc/self/nope"}, probe.ExitErrno, ""},
		{"an unknown inode flag is refused", []string{"setflags", f, "z"}, probe.ExitErrno, "setflags: unknown flag 'z' (want i, a or d)\n"},
		{"nobody listens on a fresh abstract name", []string{"connect-abstract", "dshsim-probe-test-nobody"}, probe.ExitErrno, "connect-abstract: ECONNREFUSED (connection refused)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := probe.Run(tc.args, &out, &errb)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d (stdout %q stderr %q)", code, tc.wantCode, out.String(), errb.String())
			}
			if tc.wantOut != "" && out.String() != tc.wantOut {
				t.Fatalf("stdout %q, want %q", out.String(), tc.wantOut)
			}
			if code == probe.ExitUsage && (out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 || !strings.HasSuffix(errb.String(), "; run escape-probe -h for usage\n")) {
				t.Fatalf("usage error: stdout %q, stderr %q; want one line pointing at -h", out.String(), errb.String())
			}
			if tc.args != nil && tc.args[0] == "-h" && (!strings.HasPrefix(out.String(), "usage: escape-probe OP ARGS...\n") || errb.Len() != 0) {
				t.Fatalf("-h: stdout %q, stderr %q", out.String(), errb.String())
			}
		})
	}
	if b, err := os.ReadFile(f); err != nil || string(b) != probe.Payload {
		t.Fatalf("the write left %q, %v", b, err)
	}
}

// TestOperationsReachTheKernel: the operations the corpus's isolation and
// metadata attempts use do what they say on a file and socket of this test.
func TestOperationsReachTheKernel(t *testing.T) {
	dir := sandboxtest.TempDir(t, "dshsim-probe-") // /tmp may be a tmpfs without user xattrs
	f := filepath.Join(dir, "f")
	os.WriteFile(f, nil, 0o644)
	ln, err := net.Listen("unix", "@dshsim-probe-test-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, args := range [][]string{
		{"setxattr-as", f, "user.dshsim", "v2"},
		{"setflags", f, "d"},
		{"connect-abstract", "dshsim-probe-test-" + strconv.Itoa(os.Getpid())},
	} {
		var out, errb bytes.Buffer
		if code := probe.Run(args, &out, &errb); code != probe.ExitOK {
			t.Errorf("%v: exit %d, %s%s", args, code, out.String(), errb.String())
		}
	}
	v := make([]byte, 8)
	if n, err := unix.Getxattr(f, "user.dshsim", v); err != nil || string(v[:n]) != "v2" {
		t.Errorf("user.dshsim = %q, %v; want v2", v[:max(n, 0)], err)
	}
	fd, err := unix.Open(f, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if flags, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS); err != nil || flags&0x40 == 0 {
		t.Errorf("flags %#x, %v; want the no-dump flag 0x40", flags, err)
	}
}
