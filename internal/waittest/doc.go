// Package waittest bounds the waits of tests. A test that waits for a call
// to return, a channel to close, a goroutine group, a polled condition or a
// process to exit waits through this package: when a bug keeps the wait
// from ending (a timeout that no longer fires, a cancellation that is not
// honoured, a limit that no longer stops a run), the test fails after a
// deadline of its own with a message naming what it waited for, instead of
// hanging its package until go test's -timeout kills the whole binary with
// a stack dump that names no test.
//
// The deadlines are far above what the waits take on a loaded machine: they
// say "this hangs", never "this is slow" (speed is measured in benchmarks).
// [Deadline] bounds a wait for one call, event or process; [BatchDeadline]
// a wait for a batch of replays or upstream runs.
//
// A function handed to [Call], [Do] or [Within] runs in a goroutine of its
// own and may stop the test (t.Fatal): the wait then ends the test too. When
// the deadline passes that goroutine is left behind, blocked where the bug
// left it; the test has failed and its package goes on.
package waittest
