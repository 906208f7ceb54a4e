// Package render turns bash execution facts into the exact text the model gets.
//
// # Foreground results
//
// [Result] renders one finished foreground call: stdout, then a "[stderr]"
// section, or "(no output)" when both are empty; a truncated stream carries the
// pointer "[output truncated; full output: <path or (unavailable)>]". Marker
// lines follow, in this order: the sandbox denial marker (and the escalation
// hint only when escalation is advertised), "[timed out after <ms>ms]",
// "[stopped: <reason>]", then "[killed by signal: <SIG>]" or, for a non-zero
// exit, "[exit code: <n>]". A non-zero exit is reported, never a tool error.
//
// # Promoted timeouts and background jobs
//
// [Promoted] renders a foreground call whose timeout expired while the command
// kept running as a background job; [JobRead] renders an incremental
// job_output read; [CompletionNotice] is the message sent when a background job
// finishes; [JobDetail] is the "exit code: <n>; <notes>" detail shared by both.
//
// Every string here is a model-facing interface string and is byte-exact with
// upstream's: as its recordings pin them, and as the newer upstream words
// what no recording shows (a promoted timeout).
//
// # Imports
//
// render imports sandbox (the [sandbox.Report] it reads and the VERBATIM
// markers); it must not import sandbox/spawn (the executor returns the
// report, render reads it), tools/..., stack or harness/... (test tooling).
package render
