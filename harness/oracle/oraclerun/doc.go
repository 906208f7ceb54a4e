// Package oraclerun runs one recording through upstream's own snapshot
// harness (the oracle harness/oracle installs; see its README) and reports
// whether upstream reproduces it: its normalised stdout and session.jsonl
// each MATCH or not, as upstream's suite compares them.
//
// [Replay] runs the oracle's agent/run.mjs on the recording with the
// oracle's node 22, in a child process with a private /tmp (package
// isolate): upstream's harness and tools write their workspaces, spill
// roots and subprocess files there, and nothing is left in the host's /tmp.
// [Dir] is the installed oracle named by DSHSIM_ORACLE; tests that need it
// skip naming the variable when it is unset (CI sets it).
//
// [Run] is the same run whatever the verdict, returning upstream's raw
// session log (its event times included) and optionally another agent
// directory and process environment: package callbench times upstream's
// calls from it.
//
// This is the smallest runner dsh-replay's refresh and dsh-record tests
// need: one recording, replay mode, the per-recording switches given as
// environment variables.
//
// # Imports
//
// Test tooling: harness/replay/isolate and the standard library.
package oraclerun
