// Package replay replays recorded model sessions through the real tool stack
// and compares the tool boundary with the recording.
//
// # What a replay does
//
// [Replay] loads a recording (package recording), derives the model script
// from its assistant/chunk events, reads the sandbox mode and approval policy
// from the recording's first runtime-context message, seeds a fresh temporary
// workspace from workspace/, and composes the real stack (package
// stack) on a new session log of ours, configured as upstream's suite ran the
// scenario (dshsim.replay.json; the foreground timeout kills, as in the
// recorded version). It then drives the steps of input.json (the handshake,
// newSession and its refusal, prompt, promptExpectError, promptAndCancel and
// the harness's waits) as upstream's snapshot harness does (client.go), and
// runs the agent as upstream's agent loop does, writing upstream's event sequence
// seq for seq: each model call takes the next
// scripted reply (the model is constructed from the recording and named so in
// our log), every tool call runs through the real pipeline (bash under the
// real sandbox, file tools with observation, approval, escalation, jobs,
// session queries, spill, rendering) with upstream's scheduling (exclusive
// calls alone, concurrency-safe ones pooled), job notices reach the model
// through the next-step inbox, a cancelled prompt aborts the running call and
// answers the undispatched ones before dispatch, and approval prompts are
// answered from permissionAnswers in FIFO order (allow_once → allowed-once,
// reject_once → rejected, empty queue → cancelled; under policy never the
// approval service rejects without consulting the queue).
//
// # The agent loop
//
// The driver is upstream's agent loop for one agent (turn.go, step.go), run
// in a goroutine of its own (loop.go, whose schedule holds one phase: idle,
// a turn being opened by a follow-up, a turn opened, turns running; and
// whose next action is a pure switch over it): prompts and relayed messages queue in
// the inbox (inbox.go: the next-turn and next-step lists, every splice
// logged), a message queued or steered to an idle agent wakes it (a
// follow-up opens its turn at once: turn/start and the claim are written
// before it returns), [driver.runTurns] runs turns while input is pending,
// each step claims its input and runs the pre-step listeners (prestep.go,
// outermost first: an emulated fixture's hold or checkpoint, the agent's own
// contribution (a one-shot child's descriptor), the workspace instructions,
// the repeated-call reminder's reset, each hook bridge's UserPromptSubmit
// hooks, the skill catalog; a rejection ends the turn blocked, a
// checkpoint's failure ends it in error), enters the messages
// and the runtime context, asks the model, retries an error finish as its policy allows or
// fails the turn, drops a max-tokens reply's tool calls (the turn's end is
// then max-tokens, sticky), runs the tool calls, and, when the turn would
// stop, runs each bridge's Stop hooks, whose block steers another step.
// Upstream's ACP bridge is wire.go: the handshake, one chunk per committed
// text block, and each prompt's answer once the agent is idle (a failed
// turn's JSON-RPC error at its turn/end). The session's titles are title.go
// (the fallback, and a title model with sessionTitleLlm), the workspace
// instructions workspace.go over package instructions. A background child
// steps from its parent's next host yield on (host.go). [newDriver]
// composes one agent; only the session's speaks to a client. A turn's end,
// its failure (one type, session.Failure, from a model's error finish or a
// fixture's checkpoint), a retry and the other events the runtime reads
// back are the typed data of package session.
//
// # Agents and child sessions
//
// Every agent of a replay is a driver of its own over a stack.Surface: the
// session's agent (the stack), and every child the stack's delegation
// runtime creates (children.go, session.go), which the runtime drives
// through the driver as its stack.Loop. Each child binds a recorded child
// log (session.<n>.jsonl): it takes the id and script of its parent's next
// recorded child at creation and is rebound, at its first model call, to
// the recorded sibling whose first prompt is its task, so children
// upstream's order does not fix compare as a set. Result.Children compares
// each (childresult.go) with its links (parentSession, delegationDepth,
// origin, seedLength). The subagent fixtures of upstream's suite are
// emulated and named in the notes (fixtures.go).
//
// # The model
//
// The driver calls a [Model] once per step: Info names it in the log
// (request header config, request context, every assistant message's
// source) and gives its retry policy; Call streams one reply, each chunk
// handed to the driver as it comes (logged as assistant/chunk) and the
// finished reply returned. A replay's model is the recording's script
// (named as constructed in our log); a refresh's is the same script named
// as the recording names its model; dsh-record's is a live model over an
// OpenAI-compatible server (package llm/deepseek), which gets the
// conversation our log holds. A reply whose finish is an error ends the
// turn with its failure, unless the model's retry policy retries it
// (llm/retry, then llm/retry-started, then the retried chunks in the same
// step). A chunk that is not lossless JSON (a number JSON.parse reads as
// ±Infinity, 1e999, or as -0) is refused by the log as upstream's refuses
// it: the turn fails with code UNKNOWN (`session event "assistant/chunk"
// carries non-JSON-serializable data`), nothing of the chunk logged or
// retried. A failure not retried is thrown as upstream's LlmError: a field
// its constructor refuses (a null or non-positive providerRetryAfterMs, a
// status outside 100-599, an empty message, ...) fails the turn with the
// constructor's text, code UNKNOWN; else the turn's failure keeps its five
// fields alone (message, code, status, providerRetryAfterMs, requestId).
//
// # Front ends beyond ACP
//
// A headless, JSON-RPC or Python SDK recording (package recording says
// how its files are told apart) is driven as ACP's, without the ACP
// bridge's frames: what its client received is compared with our log
// instead (frontend.go: the stream-json records and result, the
// notifications and final response, a Python SDK result's events beside
// its notifications). The composition is stated, never guessed: a log without
// a runtime context is composed without the policy plugins
// (stack.Without.Policy), one whose runtime context has no approval
// section without the approval plugin (stack.Without.Approval); a resumed
// session's seed is written and resumed as upstream resumes it
// (session.InterruptedTurnClosers). A goal recording is driven as ACP's,
// frames and all, with upstream's goal-round driver on the session's agent
// (goalrounds.go: at idle an armed goal's next round is queued as a turn);
// a scripted reply's {{fromRequest:<pattern>}} is resolved against the
// conversation (fromrequest.go). A web recording's user types its log's
// prompts and slash commands between turns (webcmd.go) and steers in the
// messages the log enters inside a running turn (steer.go: queued, then
// the queued row steered, as the step the message was recorded after
// ends); its user messages are compared by their place in the
// conversation beside the tool boundary. docs/replay.md, Front ends
// beyond ACP.
//
// # Refresh and record
//
// [Refresh] replays a recording with its own script and writes back what
// the stack produced (package fixture turns our log into upstream's stored
// form, stabilized against the committed log). [Record] drives a live
// model through the stack in an isolated child and writes a new recording
// through a temporary directory renamed into place. Both, and
// [UpdateProjection], write only after a complete run (the context checked
// after it) and write every file at once (package fileset): an interrupt
// at any point leaves the recording as it was or as the complete run
// writes it, and a replay reads a recording under the shared lock of its
// directory, refusing one an interrupted writer left half replaced.
// docs/record.md says how both behave.
//
// # Profiles and served bodies
//
// The tools beyond the safety stack are composed per upstream overlay
// (profile.go: the recording's profile setting or the scenario-name table,
// plus the area of any such tool the model calls), the workspace is
// prepared as upstream's suite prepares it (prepare setting), and a
// standalone overlay runs without a runtime context. Bodies that need what
// this machine lacks (pwsh without PowerShell, cordis_inspect_query) are
// served from the recording's own results, each session's call from its
// own log (profile.go: pickServed); Result.Served names them and every
// report shows it. A promptContent step's images are admitted into
// the attachment store as upstream's bridge admits an inline image prompt
// (images.go).
//
// # Hooks
//
// The seeded workspace is also the launch cwd, so its hooks.json (Claude Code)
// and codex-hooks.json (Codex) load as in upstream's snapshot runs; hook
// commands run for real on every replay and their hook/invoked and hook/result
// events are compared. A PostToolUse hook's additionalContext is staged in the
// next-step inbox and appended as a plugin user/message after the next
// step/start; UserPromptSubmit and Stop hooks run at the agent's turn points
// (see The agent loop). A
// config that cannot be used is a note naming the recording's file, line and
// field. Options.StrictHooks (dsh-replay -strict-hooks) fails closed where
// upstream's hooks fail open.
//
// # Comparison
//
// Both logs are projected (package projection) and compared per turn and in
// order. A recording matches when every projected event matches and nothing is
// flagged: an exhausted script, unconsumed replies, an answer kind the prompt
// does not offer, a compared line of stdout.expected.jsonl that differs
// (package acpwire: every frame the bridge sends, in order), a tool
// schema that differs from tool-schemas.expected.json (package toolschema), a
// tool-owned section of the system prompt that is not a paragraph of
// system-prompt.expected.md, or a stale projection.expected.json.
// Every event of either log that the projection leaves out is named in a
// note of the recording (or child) with its reason (projection.Coverage:
// the model's chunks and messages, the model request, step and turn
// boundaries, a splice into the next step, ...); an event the projection
// neither compares nor names is an error naming its seq.
//
// # Files of ours beside a recording
//
//   - dshsim.replay.json: settings the recording cannot state (spill cap in
//     bytes, diff bound, bash timeout, retry policy, title model, workspace
//     instructions, workspace preparation); absent for most recordings.
//   - projection.expected.json: the readable expected projection, generated
//     from session.jsonl by [UpdateProjection] (dsh-replay -update). The
//     comparison always runs against session.jsonl itself; when this file is
//     present it must equal the fresh projection, so a change of the
//     projection or normalisation rules shows up in review.
//
// # A recording is contained
//
// A recording is code and untrusted input: its hooks, bash calls and
// run_code programs run, it states its own mode and policy, approves its
// own escalations and names its own runner, and all of that is honoured
// inside a containment. Every [Replay] runs in a contained child process
// (package isolate): a root of its own holding the system directories and a
// few /etc entries read-only and nothing else of the host's filesystem; a
// /tmp of its own, a tmpfs bounded by Options.TmpSize; its own /dev, /proc
// and network namespace (loopback only); no privilege (root's replay runs
// as the host's nobody), resource bounds (Options.Bounds), its run stage
// out of reach of what it runs; all locked by a user namespace of its own
// (Result.Contained says what it could see). Upstream's fixed
// paths therefore exist once per run: the spill root
// /tmp/dsh-acp-snap-<sha256(name)[:9]> (its length sets the spill preview
// budget, and one model script names it) and the /tmp files a recording's
// commands use (/tmp/dsh-escalated.txt). The workspace is
// /tmp/acp-snap-cwd-XXXXXX, spelled like upstream's, seeded from
// workspace/ streaming under Options.Seed (recording.CopySeed). Concurrent
// replays of one recording, by one user or several, never meet, and nothing
// is left in the host's /tmp: the tmpfs and every process in the namespace
// go with the child. The recording and the runner are bound read-only at
// their own paths. The parent only writes the kept log (Options.LogDir).
//
// The parent trusts nothing the child says (judge.go): it reads the
// recording itself first, within Options.Recording (recording.LoadBounded:
// sized before it is parsed, streamed line by line, UTF-8), and refuses a
// bad one before any child starts; it names the recording and the kept log
// from its own arguments; it reads at most maxResponse bytes of the
// child's response and decodes it strictly; it recomputes the expected
// side, the comparisons and the verdict, and checks what only the child
// knows (our log, the frames sent, its flags) against them. A response
// that disagrees is an error verdict, never a match. runChild is the seam
// where tests hand the host a forged response.
//
// Where no contained child can be made, [CheckIsolation] says why and no
// replay runs, unless Options.Trusted: the recording is then replayed in
// this process, on the host, with a note saying so ([TrustedNote]), and the
// spill root it made in the host's /tmp is removed.
//
// # Running many
//
// [Discover] expands directories, [Select] filters by name and shard, [Run]
// replays concurrently. Package replay/cli is the dsh-replay command.
//
// # Imports
//
// Test tooling: it composes the real stack (package stack) and reads the
// session log (pipeline/session); no product package imports it.
package replay
