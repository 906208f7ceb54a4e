// Package replaytest replays recorded sessions from go test, as testscript's
// Run runs scripts: [Run] makes each recording found under its directories
// a subtest named for the recording, run in parallel (t.Parallel), selected
// with -run like any subtest (go test -run 'TestRecordings/fs-' replays
// only those), and failed with the recording's first difference (the
// field path, the expected and the got value; or why it could not be
// replayed) followed by the detail a dsh-replay report shows. The notes of
// each replay are logged (go test -v shows them).
//
// A user's test is three lines:
//
//	func TestRecordings(t *testing.T) {
//		replaytest.Run(t, "testdata/recordings")
//	}
//
// # Containment
//
// Every replay runs as dsh-replay runs it: contained in a child process
// (package isolate: the host read-only, a private /tmp, no network), which
// is this test binary re-executed; nothing here replays on the host. Where
// no contained child can be made (no user namespaces), [Run] skips the test,
// naming the capability (isolate.Require); it never falls back to an
// uncontained replay.
//
// A directory with no recording under it fails the test: a mistyped path
// never passes as "nothing to replay".
//
// # Imports
//
// Test support (it imports testing): harness/replay and its isolate; no
// product package imports it.
package replaytest
