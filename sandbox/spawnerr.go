package sandbox

import (
	"errors"
	"os/exec"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// nodeAsync are the errnos Node's child_process.spawn reports
// asynchronously (an 'error' event "spawn <file> <CODE>"); it throws every
// other one synchronously as "spawn <CODE>" (lib/internal/child_process.js).
var nodeAsync = []syscall.Errno{unix.EACCES, unix.EAGAIN, unix.EMFILE, unix.ENFILE, unix.ENOENT}

// NodeSpawnError is the one spawn-failure text: what Node's
// child_process.spawn reports for a start of program (argv[0] as spelled)
// that failed with err, the text upstream's tools show the model.
//
//   - an errno Node reports asynchronously: "spawn <program> <CODE>" (a
//     missing program or workdir: "spawn bash ENOENT"; exec's "not found"
//     is ENOENT), and async is true;
//   - any other errno, which Node throws: "spawn <CODE>" (a workdir that is
//     a file: "spawn ENOTDIR");
//   - an error without an errno: Go's own text.
func NodeSpawnError(program string, err error) (text string, async bool) {
	var n syscall.Errno
	switch {
	case errors.Is(err, exec.ErrNotFound):
		n = unix.ENOENT
	case errors.As(err, &n) && unix.ErrnoName(n) != "":
	default:
		return err.Error(), false
	}
	if slices.Contains(nodeAsync, n) {
		return "spawn " + program + " " + unix.ErrnoName(n), true
	}
	return "spawn " + unix.ErrnoName(n), false
}
