package cli

// usage is the text dsh-replay -h prints before its flags: it fits a screen
// with them (TestHelpFitsAScreen); the manual is docs/replay.md.
const usage = `usage: dsh-replay [flags] DIR...

Replays recorded model sessions (DIR: a recording or a directory of them)
through the real tool stack and compares the tool boundary with each one.
A recording is code: each replay runs contained, bounded, without network.
Exit status: 0 all match; 1 a mismatch or error, or -run or -shard
selects none; 2 a usage error (one line on stderr).
The manual, docs/replay.md: comparison, containment, bounds, dshsim.replay.json.

Flags:
`
