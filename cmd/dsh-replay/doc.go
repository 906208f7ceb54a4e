// Command dsh-replay replays recorded model sessions through the real tool
// stack and compares the tool boundary with the recording; see package
// harness/replay/cli and `dsh-replay -h`.
package main
