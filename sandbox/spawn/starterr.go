package spawn

import "github.com/dshsim/dshsim/sandbox"

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

// Async reports whether Node reports this failure asynchronously (after
// the spawn call returned): a background job is then started and settles as
// killed, where a synchronous one fails the call.
func (e *StartError) Async() bool {
	_, async := sandbox.NodeSpawnError(e.Program, e.Err)
	return async
}

// Node returns Node's message for the failure ([sandbox.NodeSpawnError]):
// "spawn <program> <CODE>" for an asynchronous errno (a missing workdir:
// "spawn bash ENOENT"), "spawn <CODE>" for a thrown one (a workdir that is a
// file: "spawn ENOTDIR"), and Go's text when the error carries no errno.
func (e *StartError) Node() string {
	text, _ := sandbox.NodeSpawnError(e.Program, e.Err)
	return text
}
