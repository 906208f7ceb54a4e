package cli

import (
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// usage is the text dsh-replay -h prints before its flags; its two %s are
// [wireHelp] and [settingsHelp].
const usage = `usage: dsh-replay [flags] DIR...

Replays recorded model sessions through the real tool stack and compares the
tool boundary with the recording. DIR is a recording (a directory holding
input.json, session.jsonl and stdout.expected.jsonl, optionally workspace/ and
replay.override.json) or a directory of recordings (e.g. transcripts/).

For each recording: the model's replies are rebuilt from session.jsonl (the
model is constructed from the recording); a fresh temporary workspace is seeded
from workspace/; the sandbox mode and approval policy come from the recording's
first runtime-context message; the steps of input.json are driven (initialize,
newSession, newSessionExpectError, prompt, promptExpectError, promptAndCancel:
cancelled by the user once waitForFile exists, the waits) by upstream's agent
loop (turns until idle, pre-step claims, UserPromptSubmit and Stop hooks,
retries, max-tokens, titles, workspace instructions, the repeat reminder);
approval prompts are answered from permissionAnswers in order (allow_once,
reject_once; an empty queue answers cancelled); every tool call runs through
the real stack (bash under the real sandbox, background jobs, read/write/edit
with observation, session_event_read/search, approval, escalation, spill,
rendering) and job notices reach the model as upstream's do. Our log of the
replay is compared with the recording per turn and in order: tool/call,
approval/asked, approval/decided, tool/result (text, isError, meta, error), the
runtime-context text and other plugins' messages, job notices, hook events,
workspace instructions, canceled inbox splices, titles, retries and the
turn/end reason, after normalising
{{cwd}}, UUIDs, spill locators and session_event_read times, as parsed JSON.
The schemas of the tools the stack composes are compared with
tool-schemas.expected.json in key order (other tools are named as not
modelled), and their system-prompt sections (tool:read, tool:bash, ...) must be
paragraphs of system-prompt.expected.md in order (the rest of the prompt is
upstream's application's). A recording also fails when flagged: the script was exhausted,
replies were left unconsumed, an answer kind was not offered, a compared line
of stdout.expected.jsonl differs, a tool schema or prompt section differs, the time limit stopped
it, or its projection.expected.json is stale. A bad recording (truncated line, unknown
event type, missing file, wrong field type) is an error naming file, line and
field; the other recordings still run.

Lines of stdout.expected.jsonl (the agent's ACP frames), per kind; a line of
a kind not listed fails the recording:
%s
A recording is code: its hooks, bash calls and run_code programs run for
real; it states its own sandbox mode and approval policy (it may run its
commands under danger-full-access), approves its own escalations
(permissionAnswers) and names its own sandbox backend and Landlock runner
(dshsim.replay.json). All of that is honoured, inside a containment: each
replay runs in a child process that sees the least of the host: a root of
its own holding the system directories (/usr, /bin, /lib...) and a few /etc
entries read-only, the recording and the runner bound read-only at their
paths, and nothing else (no /home, /root, /run, /var, host /tmp, /etc
secrets, sockets or FIFOs); its own /tmp (a tmpfs of at most -tmp-size
bytes holding its workspace, log and spill files; upstream's fixed paths
such as /tmp/dsh-acp-snap-<hash> exist once per run and nothing is left in
/tmp), its own /dev (null, zero, full, random, urandom, tty), its own /proc
and a network namespace with only loopback (no network), all locked by a
user namespace of its own. It runs as one uid (the host's nobody when root
runs dsh-replay, with no supplementary group), with no capability and an
environment of a few named variables (none named like a key, token, secret
or password); the process that produces its result cannot be traced,
read or written by what it runs, and a stopped or killed one is an error.
Each process is bounded in memory (-memory), CPU time (-cpu-time) and file
size (-file-size), the whole replay in processes and threads
(-processes); a replay stopped by a bound says which. Every process it
starts ends with it. Its workspace/ seed is copied streaming under the
-seed-max-* bounds; a file past one is an error naming it. Only dsh-replay
itself writes the host: the report, -html and -logs.
Where the containment cannot be made (user namespaces disabled), dsh-replay
says so in one line and replays nothing, unless -trusted says the recordings
are trusted: they then replay on the host, uncontained, each with a note.

The report goes to stdout: one line per recording (its first mismatch below it
with field path, expected and got; the tools whose bodies were served from
the recording), then a summary line "ok: ..." or "FAIL: ...". -json writes
one JSON document instead. -html FILE also writes a self-contained page that
opens with a summary table (recording, verdict, events matched, first
difference, served tools; click a column header to sort by it) followed by a
timeline per recording. -junit FILE also writes JUnit XML for CI: one test
case per recording with its time, a failure whose message is the first
difference, an error for a recording that could not be replayed, the notes
and served tools as system-out.

Progress: on a terminal, a run longer than two seconds shows one
self-rewriting line on stderr (recordings done of total, the ones replaying
now), cleared before the report. When stderr is not a terminal, nothing of it
is written.

Files of ours beside a recording (both optional):
  dshsim.replay.json        how upstream's suite configured the scenario, where
                            the recording cannot say it; one JSON object, an
                            unknown key is an error. Keys (value; the upstream
                            scenario and knob it mirrors; what it does):
%s                            Without the file, a recording named after a
                            scenario upstream's suite configures (bash-spill,
                            parallel-tool-calls, session-query-spill,
                            fs-write-overwrite-bounded,
                            partial-landlock-child-failure,
                            missing-sandbox-runner, empty-response-retry,
                            session-title-after-turn, agent-instructions)
                            gets that scenario's settings.
  projection.expected.json  the readable expected projection, written by -update
                            from session.jsonl; the comparison always runs
                            against session.jsonl, and this file, when present,
                            must equal the fresh projection (else: stale).

Exit status: 0 when every recording matches, 1 otherwise, 2 on usage errors
(one line on stderr naming the problem: a bad flag or value, a DIR that is
not a recording, two recordings of one name with -logs, an -html or -junit
FILE or a -logs DIR whose parent directory does not exist). Every path is checked
before anything is replayed. A -run or -shard that selects no recording is
one line on stderr naming it, nothing on stdout, exit 1.

Flags:
`

// settingsHelp lists the keys of dshsim.replay.json for the usage text.
func settingsHelp() string {
	var b strings.Builder
	for _, k := range recording.SettingKeys {
		fmt.Fprintf(&b, "    %s: %s\n      mirrors %s\n      %s\n", k.Name, k.Value, k.Mirrors, k.Meaning)
	}
	return b.String()
}

// wireHelp lists the stdout line kinds: compared or why not.
func wireHelp() string {
	var b strings.Builder
	for _, k := range acpwire.Kinds {
		verdict := "not compared"
		if k.Compared {
			verdict = "compared"
		}
		fmt.Fprintf(&b, "    %s: %s: %s\n", k.Kind, verdict, k.Why)
	}
	return b.String()
}
