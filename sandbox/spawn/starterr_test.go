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

// TestStartErrorNodeText: a StartError reads as the one spawn-failure text
// ([sandbox.NodeSpawnError]) of its program and error, and keeps Go's text
// and chain.
func TestStartErrorNodeText(t *testing.T) {
	for _, err := range []error{
		&fs.PathError{Op: "fork/exec", Path: "/usr/bin/bash", Err: syscall.ENOENT},
		&fs.PathError{Op: "fork/exec", Path: "/usr/bin/bash", Err: syscall.ENOTDIR},
		&exec.Error{Name: "bash", Err: exec.ErrNotFound},
		errors.New("no errno"),
	} {
		se := &StartError{Program: "bash", Err: err}
		want, async := sandbox.NodeSpawnError("bash", err)
		if se.Node() != want || se.Async() != async {
			t.Errorf("%v: Node() = %q, Async() = %v; want %q, %v", err, se.Node(), se.Async(), want, async)
		}
		if se.Error() != err.Error() || !errors.Is(se, err) {
			t.Errorf("%v: Go's text or chain lost: %q", err, se.Error())
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
