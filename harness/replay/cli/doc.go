// Package cli is the dsh-replay command: [Main] parses the flags, replays the
// selected recordings and writes the text, JSON and HTML reports. cmd/dsh-replay
// only calls [Main]; tests and testscript call it directly.
//
// # Output
//
// The report goes to stdout: one line per recording in name order (the first
// mismatch of a recording follows as indented lines with the field path, the
// expected and the got value), then a summary line; with -json a single JSON
// document instead. Progress goes to stderr: one self-rewriting line on a
// terminal, plain lines otherwise.
//
// # Exit status
//
// 0 when every selected recording matches; 1 when any does not; 2 for a usage
// error (bad flag, no recording selected).
//
// # Imports
//
// Test tooling: it imports harness/replay and harness/replay/htmlreport;
// no product package imports it.
package cli
