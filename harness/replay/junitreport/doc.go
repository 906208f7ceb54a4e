// Package junitreport writes the dsh-replay JUnit XML report (dsh-replay
// -junit FILE), the format CI systems read test results in.
//
// # Document
//
// One <testsuites> holding one <testsuite name="dsh-replay"> (its time is
// the run's wall time, its timestamp the run's start in UTC) with one
// <testcase> per recording, in the report's order:
//
//   - name: the recording's name; classname: "dsh-replay." and the name of
//     the directory holding it (dsh-replay.transcripts), or "dsh-replay";
//     time: the replay's wall time in seconds;
//   - a mismatch has a <failure type="mismatch">: its message is the first
//     difference (replay.Result.FirstDifference), its text every differing
//     field and flag of that first difference (replay.Result.Detail);
//   - a recording that could not be replayed has an <error type="error">
//     whose message and text are the error (naming file, line and field);
//   - <system-out> holds the notes ("note: ...") and the tools whose bodies
//     were served from the recording ("served from the recording: ...").
//
// The text is escaped by encoding/xml: a character XML cannot hold (a
// terminal escape in a tool's output) becomes U+FFFD, so the file always
// parses.
//
// # Imports
//
// Test tooling: it imports harness/replay only; no product package imports
// it.
package junitreport
