// Command dsh-record records a session of a live model driving our real
// tool stack, as a recording in upstream's layout that dsh-replay (and
// upstream's own suite) replays:
//
//	dsh-record -o OUT SCENARIO
//
// SCENARIO holds input.json (and optionally workspace/). See package
// github.com/dshsim/dshsim/harness/replay/recordcli and docs/record.md.
//
// A thin main: it imports harness/replay/recordcli (its Main) and nothing
// else of this module.
package main
