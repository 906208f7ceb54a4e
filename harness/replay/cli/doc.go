// Package cli is the dsh-replay command: [Main] parses the flags into an
// options struct; run validates it (the flag values, the -html and -logs
// paths, the recordings and the selection, all before anything is replayed),
// replays the selected recordings and writes the text, JSON and HTML
// reports. With -refresh it rewrites each recording's stack side instead
// (replay.Refresh), one line per recording. cmd/dsh-replay only calls
// [Main]; tests and testscript call it directly. The help text is in
// usage.go.
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
// 0 when every selected recording matches; 1 when any does not, or when -run
// or -shard selects no recording (one line on stderr naming the selection,
// as every dshsim command says "nothing matched"); 2 for a usage error (a
// bad flag or value, a DIR that is not a recording, an -html FILE or -logs
// DIR whose parent directory is missing: -logs makes DIR, never its
// parents).
//
// # Imports
//
// Test tooling: it imports harness/replay and harness/replay/htmlreport;
// no product package imports it.
package cli
