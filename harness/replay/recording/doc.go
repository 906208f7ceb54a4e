// Package recording reads one recorded session in upstream's snapshot format
// and derives the model script from it.
//
// # Layout
//
// A recording is a directory holding:
//
//   - input.json: {steps, permissionAnswers?}; the prompts and the user's answers
//     (and, ours, sandboxMode and approvalPolicy: the policy dsh-record
//     records under; [LoadInput] reads a scenario's);
//   - session.jsonl: the recorded log (header line, then events; packed
//     text-chunks, reasoning-chunks and tool-call-chunks rows are expanded into
//     one assistant/chunk event per member, with contiguous seq numbers);
//   - stdout.expected.jsonl: the agent's JSON-RPC frames (read and validated);
//   - workspace/ (optional): seed files copied into the fresh workspace
//     ([CopyTree]: files, directories, symlinks that stay inside it); the
//     symlinks setting names the paths the scenario's fixture holds as
//     links, which a checkout without symlinks stores as link stubs
//     ([SeedLinks], [RestoreLinks]);
//   - replay.override.json (optional): upstream's script override;
//   - dshsim.replay.json (optional, ours): settings a recording cannot state
//     itself (see [Settings]);
//   - projection.expected.json (optional, ours): the readable projection the
//     comparison expects, generated from session.jsonl by dsh-replay -update;
//   - tool-schemas.expected.json (optional): upstream's pin of the tools the
//     model saw;
//   - system-prompt.expected.md (optional): upstream's pin of the system
//     prompt, read once as the paragraphs of its first prompt.
//
// # Front ends
//
// The files say which front end recorded a directory ([ClassifyFiles],
// [DetectFrontend]): ACP's layout above; headless's stream-json and saved
// logs (session.expected.jsonl, parent.expected.jsonl, child.expected.jsonl,
// the stream's events when the log is a header), read into [Stream]; the
// JSON-RPC example's notifications and result; goal's, driven as ACP's
// ([Frontend.OverACP]) with session.jsonl a header, the model script
// replay.override.json and the whole log session.expected.jsonl the one
// compared; the Python SDK's result.json (its events, notifications
// placed as JSON-RPC's, final_response; [Recording.IDTokens] its id
// tokens); web's session.jsonl beside its UI renders, its steps the
// log's prompts, slash commands and steered messages ([WebSteps], a
// steered one placed at its [SteerPoint]); and a web directory holding only seed.jsonl is not a session
// ([NotASessionError]). What a front end's test file gives a scenario by
// name is [FrontendSuiteSettings] ([SuiteSettingsOf]); Recording.LogFile
// names the log Header and Events come from.
//
// # Earlier message shape
//
// A log the web app wrote before its messages had identities (an
// assistant/message or tool/result with its content and no message, a
// user/message without id and role) is read in the current shape as
// upstream's session persistence upgrades a stored log; Event.Earlier
// marks such an event, [Recording.EarlierShape] finds the first, and a
// web log in that shape stating no policy replays under the web
// composition's default ([WebDefaultMode], [WebDefaultApproval]).
//
// Upstream's other migrations of a stored log come first, in its order: a
// turn/start's trigger is dropped, a turn/end's earlier reason (aborted
// without a reason, disposed, error with a step and a failure or message)
// made current, a steering/message read as a user/message; the legacy
// types request/header-delta and mode/set and a request/header reason
// fallback are refused. A surfaceOp is "append" or an exact replace of a
// range on the surface, on a message event only; a message event without
// one is read as appended (upstream refuses it: the tests' synthetic logs
// omit it), and sourceEventSeqs and a replacing tool/result's content-only
// rule are not checked. These apply in a session log only: a stream's or
// notification's events are read as written.
//
// # Tools mode
//
// [Recording.ToolsMode] is the one place the tools presentation a recording
// shows (native, code, both) is decided: from the pin of the tools when there
// is one, else from the model's top-level calls and, for a model that calls
// only run_code, from whether the system prompt carries code mode's
// tools:code-only line.
//
// # Errors
//
// Every defect is a [*Error] naming the file, the 1-based line (0 when the
// defect is not tied to a line) and the JSON field path, for example
// "session.jsonl:12: field data.chunk.index: want number, got string". A
// recording with an error is never half-loaded: [Load] returns nil and the error.
//
// # Bounds
//
// [LoadBounded] reads a recording within [Bounds] ([Load]: the defaults):
// its files are sized before any is parsed and a recording past
// Bounds.MaxBytes is refused naming its largest file; the JSONL files are
// streamed line by line, never read whole, and a line past
// Bounds.MaxLineBytes is refused naming its file and line; a file that
// reads longer than its size said is read no further than the bound; a
// file that is not valid UTF-8 (upstream writes them with JSON.stringify,
// which never produces such bytes) is refused naming its file, line and
// column; a file that is not a regular file (a FIFO would block) is
// refused. [Recording.ReadFile] reads a sidecar the replay reads itself the
// same way. The workspace seed has bounds of its own ([SeedBounds]).
//
// # Script
//
// [Derive] rebuilds the model's replies the way upstream's replay plugin does:
// the assistant/chunk events in log order, one model call per finish chunk; a
// change of (turn, step) or the end of the log without a finish is an error.
// Tool calls come from the block-end tool-call blocks. Nothing else in the log
// feeds the script.
//
// # Imports
//
// Test tooling: it imports pipeline/session (the event shape it reads) and
// tools/code/sdk (the tools:code-only line), nothing else of this module; no
// product package imports it.
package recording
