// Package cli is the dsh-replay command: [Main] parses the flags into an
// options struct; run validates it (the flag values, the -html and -logs
// and -junit paths, the recordings and the selection, all before anything
// is replayed), replays the selected recordings and writes the text, JSON,
// HTML and JUnit reports. With -refresh it rewrites each recording's stack
// side instead (replay.Refresh), one line per recording. cmd/dsh-replay only
// calls [Main]; tests and testscript call it directly. The help text is in
// usage.go: it fits a screen (at most 60 lines, TestHelpFitsAScreen), and
// docs/replay.md is the manual it points at.
//
// # Output
//
// The report goes to stdout: one line per recording in name order (the first
// mismatch of a recording follows as indented lines with the field path, the
// expected and the got value), then a summary line; with -json a single JSON
// document instead. -html FILE and -junit FILE write the HTML report
// (package htmlreport) and the JUnit XML report for CI (package
// junitreport) as well.
//
// # Progress
//
// On a terminal, a run that lasts longer than two seconds shows one
// self-rewriting line on stderr: recordings done of total and the ones
// replaying now, cut to the terminal's width, cleared before the report (and
// around anything a replay writes to stderr). When stderr is not a terminal
// (a pipe, a file, CI's log) nothing of it is written. progress.go holds it.
//
// # Exit status
//
// 0 when every selected recording matches; 1 when any does not, or when -run
// or -shard selects no recording (one line on stderr naming the selection,
// as every dshsim command says "nothing matched"); 2 for a usage error (a
// bad flag or value, a DIR that is not a recording, an -html or -junit FILE
// or a -logs DIR whose parent directory is missing: -logs makes DIR, never
// its parents).
//
// # Imports
//
// Test tooling: it imports harness/replay, harness/replay/htmlreport and
// harness/replay/junitreport; no product package imports it.
package cli
