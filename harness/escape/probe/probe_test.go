package probe_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/harness/escape/probe"
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
		{"a wrong argument count is a usage error", []string{"write"}, probe.ExitUsage, ""},
		{"a write that works says ok", []string{"write", f}, probe.ExitOK, "write: ok\n"},
		{"a failing syscall prints its errno name", []string{"unlink", filepath.Join(dir, "missing")}, probe.ExitErrno, "unlink: ENOENT (no such file or directory)\n"},
		{"rename has no copy fallback across devices", []string{"rename", f, "/proc/self/nope"}, probe.ExitErrno, ""},
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
		})
	}
	if b, err := os.ReadFile(f); err != nil || string(b) != probe.Payload {
		t.Fatalf("the write left %q, %v", b, err)
	}
}
