// Command dsh-replay replays recorded model sessions through the real tool
// stack and compares the tool boundary with the recording; see package
// harness/replay/cli, `dsh-replay -h` and its manual, docs/replay.md.
//
// A thin main: it imports harness/replay/cli (its Main) and nothing else
// of this module.
package main
