package cli

// usage is the text dsh-replay -h prints before its flags: it fits a screen
// with them (TestHelpFitsAScreen); the manual is docs/replay.md.
const usage = `usage: dsh-replay [flags] DIR...

Replays recorded model sessions through the real tool stack and compares
the tool boundary with each recording. DIR is a recording (input.json,
session.jsonl, stdout.expected.jsonl, optionally workspace/) or a directory
of recordings (e.g. transcripts/). The model is constructed from the
recording; tools, approval, escalation, spill and the sandbox are real.

A recording is code: each replay runs contained (the host read-only, its
own bounded /tmp, /dev and /proc, no network, a user namespace of its
own). Where that cannot be made, nothing is replayed unless -trusted.

The report (stdout): a line per recording, its first mismatch below it,
then "ok: ..." or "FAIL: ..."; on a terminal a long run shows progress on
stderr. Exit status: 0 all match; 1 a mismatch or error, or -run or -shard
selects none; 2 a usage error (one line on stderr; every path is checked
before anything is replayed).

The manual, docs/replay.md: what is compared, the containment, the settings
file dshsim.replay.json, the kinds of stdout.expected.jsonl lines.

Flags:
`
