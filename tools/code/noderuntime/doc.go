// Package noderuntime runs one run_code program in a fresh Node child
// process confined by the same sandbox confiner as bash, under the call's
// policy (the page's design, with the recorded version's texts; docs/stack.md,
// Departures from the recorded version, says where it differs).
//
// # One run
//
//  1. The program is compiled in-process (package compile); a compile error
//     is an "exception" outcome and nothing is spawned.
//  2. node runs our embedded runtime (runtime.js, `node -e`) through
//     sandbox/spawn: danger-full-access unconfined, as bash; a confined mode
//     confined by bash's confiner (the stack's: in this process under
//     Landlock) (no backend, or a runner that fails before
//     node starts, is *sandbox.UnavailableError: the run is refused, nothing
//     runs unconfined). The environment keeps only PATH, TEMP and TMP; the
//     program sees process.env as {} and no require, module or builtin
//     globals.
//  3. The host and the runtime talk over a private socket, descriptor 3 in
//     the child (never its stdout): 4-byte big-endian length frames of
//     UTF-8 JSON. The child announces ready; the host boots it with the
//     compiled body and the tool names; calls, turn ends (after a turn of
//     the program that issued calls, the last call's id), logs,
//     output-limit, done and fatal flow up, replies down. [Request.Submitted]
//     hears of each call as it is read, stamped with the child's CPU time
//     when the program issued it, [Request.TurnEnded] of each turn. The host checks every frame: a bad
//     frame, an out-of-sequence call id, an undeclared binding or too many
//     pending calls end the run as "protocol"; the first done wins and its
//     error beats its value.
//  4. Limits, with upstream's texts: busy time (CPU time of the event-loop
//     thread after start-up, read from /proc every 25 ms) "compute budget
//     exhausted (<ms>ms busy)"; elapsed time "wall-clock ceiling reached
//     (<ms>ms)"; the combined output ledger (JSON size of the logs plus the
//     value or failure message) "outer output exceeded <n> bytes", with the
//     logs cut to the longest prefix that fits; pending calls.
//  5. Settlement stops and kills the child and every process below it (the
//     /proc tree, repeated until no new process appears, then the process
//     group), waits for its exit and output, and composes the [Result].
//
// # Workflow mode
//
// [Request.Workflow] runs a workflow tool's body (package tools/workflow)
// instead of a program, in the same confined child: the body is not
// compiled as TypeScript but parsed as plain JavaScript inside an async
// function (a body that does not parse is a [KindParse] failure and the
// host hears nothing); then the host is told "start", and the body runs in
// a fresh vm context holding only agent, parallel, pipeline, phase, log and
// args, with upstream's option checks, caps ([WorkflowLimits]) and default
// label. Each agent() is a host call "agent" with {prompt, seq, label,
// phase?, schema?, provider?, model?, readOnly?} answered {outcome, value}
// ([WorkflowCalls]); the value is {value, agentsStarted}.
//
// # Must not import
//
// pipeline (the caller dispatches calls through [Call]), anything under
// harness, stack or tools/...; only sandbox, sandbox/spawn and the
// tools/code packages compile and internal/jsjson.
package noderuntime
