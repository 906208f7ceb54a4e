package spawn

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
)

// TestStartErrorNodeText: Node's spawn names argv[0] for the errnos it
// reports asynchronously (EACCES EAGAIN EMFILE ENFILE ENOENT) and throws
// "spawn <CODE>" for the rest; a missing program is ENOENT.
func TestStartErrorNodeText(t *testing.T) {
	pe := func(e syscall.Errno) error { return &fs.PathError{Op: "fork/exec", Path: "/usr/bin/bash", Err: e} }
	for _, tc := range []struct {
		err   error
		want  string
		async bool
	}{
		{pe(syscall.ENOENT), "spawn bash ENOENT", true},
		{pe(syscall.EACCES), "spawn bash EACCES", true},
		{pe(syscall.EAGAIN), "spawn bash EAGAIN", true},
		{pe(syscall.EMFILE), "spawn bash EMFILE", true},
		{pe(syscall.ENFILE), "spawn bash ENFILE", true},
		{pe(syscall.ENOTDIR), "spawn ENOTDIR", false},
		{pe(syscall.ENOEXEC), "spawn ENOEXEC", false},
		{pe(syscall.EPERM), "spawn EPERM", false},
		{&exec.Error{Name: "bash", Err: exec.ErrNotFound}, "spawn bash ENOENT", true},
		{errors.New("no errno"), "no errno", false},
	} {
		se := &StartError{Program: "bash", Err: tc.err}
		if got := se.Node(); got != tc.want || se.Async() != tc.async {
			t.Errorf("%v: Node() = %q, Async() = %v; want %q, %v", tc.err, got, se.Async(), tc.want, tc.async)
		}
		if se.Error() != tc.err.Error() || !errors.Is(se, tc.err) {
			t.Errorf("%v: Go's text or chain lost: %q", tc.err, se.Error())
		}
	}
}

// TestStartFailsWithStartError: real starts in a missing directory and in a
// file come back as *StartError naming argv[0] as spelled.
func TestStartFailsWithStartError(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(dir, "nope"), "spawn bash ENOENT"},
		{file, "spawn ENOTDIR"},
	} {
		_, err := Start(context.Background(), Request{Argv: []string{"bash", "-c", "true"}, Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: dir}, Dir: tc.dir})
		var se *StartError
		if !errors.As(err, &se) || se.Node() != tc.want {
			t.Errorf("dir %s: err = %v, want a StartError reading %q", tc.dir, err, tc.want)
		}
	}
}
