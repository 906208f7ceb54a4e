package sandbox

import (
	"errors"
	"io/fs"
	"os/exec"
	"syscall"
	"testing"
)

// TestNodeSpawnError: Node's spawn names argv[0] for the errnos it reports
// asynchronously (EACCES EAGAIN EMFILE ENFILE ENOENT) and throws
// "spawn <CODE>" for the rest; a missing program is ENOENT; an error without
// an errno keeps Go's text.
func TestNodeSpawnError(t *testing.T) {
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
		{pe(syscall.Errno(4095)), pe(syscall.Errno(4095)).Error(), false}, // an errno without a name
	} {
		if got, async := NodeSpawnError("bash", tc.err); got != tc.want || async != tc.async {
			t.Errorf("%v: NodeSpawnError = %q, %v; want %q, %v", tc.err, got, async, tc.want, tc.async)
		}
	}
}

// TestRunnerFailureDetailIsNodesText: the detail of a runner that could not
// be started is "Error: " and the one spawn-failure text, the same an
// executor's start error shows.
func TestRunnerFailureDetailIsNodesText(t *testing.T) {
	for _, err := range []error{
		&fs.PathError{Op: "fork/exec", Path: "/opt/r", Err: syscall.ENOENT},
		&fs.PathError{Op: "fork/exec", Path: "/opt/r", Err: syscall.EACCES},
		&exec.Error{Name: "/opt/r", Err: exec.ErrNotFound},
	} {
		text, async := NodeSpawnError("/opt/r", err)
		if got := spawnFailureDetail(err, "/opt/r"); got != "Error: "+text || !async {
			t.Errorf("%v: detail %q, Node's text %q (async %v)", err, got, text, async)
		}
	}
}
