package spawn

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// StartError is a start that failed before the command ran: the working
// directory cannot be entered, the program cannot be found or executed.
// Error is Go's text (unchanged for callers that show it); [StartError.Node]
// is what Node's child_process.spawn reports for the same failure, the text
// upstream's tools show the model.
type StartError struct {
	// Program is argv[0] as spelled of what was started: the command's own
	// program, or the runner's under a wrapping confiner.
	Program string
	// Err is the start error.
	Err error
}

func (e *StartError) Error() string { return e.Err.Error() }

// Unwrap returns the start error.
func (e *StartError) Unwrap() error { return e.Err }

// nodeAsync are the errnos Node's spawn reports asynchronously (an 'error'
// event "spawn <file> <CODE>"); it throws every other one synchronously as
// "spawn <CODE>" (lib/internal/child_process.js).
var nodeAsync = []syscall.Errno{unix.EACCES, unix.EAGAIN, unix.EMFILE, unix.ENFILE, unix.ENOENT}

// errno is the start's errno; exec's "not found" is ENOENT, as Node's
// spawn of a missing program. ok is false for an error without one.
func (e *StartError) errno() (syscall.Errno, bool) {
	if errors.Is(e.Err, exec.ErrNotFound) {
		return unix.ENOENT, true
	}
	var n syscall.Errno
	if errors.As(e.Err, &n) && unix.ErrnoName(n) != "" {
		return n, true
	}
	return 0, false
}

// Async reports whether Node reports this failure asynchronously (after
// the spawn call returned): a background job is then started and settles as
// killed, where a synchronous one fails the call.
func (e *StartError) Async() bool {
	n, ok := e.errno()
	if !ok {
		return false
	}
	for _, a := range nodeAsync {
		if n == a {
			return true
		}
	}
	return false
}

// Node returns Node's message for the failure: "spawn <program> <CODE>"
// for an asynchronous errno (a missing workdir: "spawn bash ENOENT"),
// "spawn <CODE>" for a thrown one (a workdir that is a file: "spawn
// ENOTDIR"), and Go's text when the error carries no errno.
func (e *StartError) Node() string {
	n, ok := e.errno()
	switch {
	case !ok:
		return e.Err.Error()
	case e.Async():
		return "spawn " + e.Program + " " + unix.ErrnoName(n)
	default:
		return "spawn " + unix.ErrnoName(n)
	}
}
