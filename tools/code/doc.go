// Package code is run_code, programmatic tool calling (docs/stack.md, Code
// mode): the
// model writes a TypeScript program, it runs in a fresh Node child process
// confined by the same sandbox provider as bash under the call's policy,
// and every tools.<name>(args) re-enters the whole pipeline.
//
// # What it holds
//
//   - the run_code tool ([New] returns its registration, a tool of the
//     safety stack): its recorded schema ([Parameters], [Description]),
//     argument checks, and the run lifecycle ([Tool.Run]): the run signal is
//     linked to the outer call's; after the program settles, queued nested
//     calls are abandoned and calls in flight settle before run_code
//     returns, so no nested event is ever logged after the outer result;
//   - the nested-call bridge: each call is "<callId>:code:<n>" (n counted at
//     submission), with the outer call as parent, the same agent and the run
//     signal, dispatched through [pipeline.Registry.ExecuteStaged] (listeners,
//     approval, guards, escalation inside the tool, the sandbox, spill) and
//     logged as tool/code-dispatch-start and tool/code-dispatch; starts in
//     submission order, safe calls overlapping up to MaxParallelSubCalls,
//     exclusive calls alone (a call its tool's schema refuses is exclusive,
//     as upstream classifies it: pipeline.RunsBeside), commits in submission order; the program gets
//     the tool's value, or a ToolCallError carrying the failure's message;
//     a settle event and the next call's start are ordered as upstream's
//     host, which reads the program's calls while tools run, orders them:
//     the start first, unless the program issued the call after the tool
//     completed, in its own CPU time (settlesFirst, with a 20 ms grace
//     that keeps the calls of one Promise.all together);
//   - the bounds of one program, ours (upstream has none): nested calls
//     ([Config.MaxNestedCalls]) and the session-log bytes of their events
//     ([Config.MaxLogBytes]); past either no further call is dispatched,
//     the run signal is cancelled and the run fails (call-limit,
//     log-limit);
//   - output composition ([Text], [Render]) and the run failure
//     ([RunFailedError], CODE_RUN_FAILED);
//   - [SDK]: the tools:sdk section for the tools a program may call;
//     [Sections]: the mode's sections (tools:code-only, tools:sdk), which
//     run_code's registration ([New]) computes for each agent.
//
// Sub-packages: sdk (the declarations), compile (esbuild), noderuntime (the
// child process, its channel and limits); JSON as JavaScript sees it is
// internal/jsjson.
//
// # Must not import
//
// harness/..., stack, or any other tool package (tools/toolreg, the
// registration, is not a tool): the composition root wires the registry,
// the policy resolver and the sandbox provider in.
package code
