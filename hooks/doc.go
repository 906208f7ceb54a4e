// Package hooks runs user-configured shell hooks on tool calls, in the two
// dialects upstream reads: Claude Code's hooks.json and Codex's
// codex-hooks.json. Each dialect is one [Bridge]: [Load] reads its one file,
// [Bridge.Register] adds a tools/pre-execute and a tools/post-execute
// listener to a pipeline registry, [Bridge.PromptSubmit] and [Bridge.Stop]
// answer the agent's turn points, and every matching hook run is logged as a
// hook/invoked, hook/result pair in the calling agent's session log.
//
// It must not import harness/..., stack or tools/...: it is a mechanism the
// composition root mounts, like the approval service.
//
// # Loading
//
// One file per dialect, read once at [Load] (a relative ConfigPath resolves
// against the launch cwd, not the session's). The file is a JSON object
// whose "hooks" object, or the root itself, maps event keys to groups
// ({matcher, hooks: [{type, command, timeout}]}); [Parse] follows upstream's
// loader rule by rule. A file that cannot be used (missing, unreadable, invalid JSON, an invalid or unsupported
// matcher) disables that bridge only, as upstream does: none of its hooks
// run, the other dialect is unaffected. Upstream says so in one logger line
// nobody sees; here [Bridge.Status] and [Status.Problems] name the file,
// line, column and field, and the stack shows them. Things upstream drops
// without a word (a malformed entry, a non-string matcher, a misspelt event
// key, a Claude Code "timeoutSec") are reported as notes and change nothing.
//
// # Matchers
//
// Absent, "" and "*" match every tool; a Claude Code pattern of
// [A-Za-z0-9_|]+ is a list of exact names; every other pattern is a
// JavaScript regular expression (package hooks/jsregex) tested anywhere in
// the tool name, as upstream's new RegExp(p).test(name). The subject is the
// name the model called, with no mapping to Claude Code or Codex tool names.
// A pattern JavaScript rejects rejects the file with upstream's VERBATIM
// diagnostic; a valid pattern Go's regexp cannot run (lookaround,
// backreferences) rejects it too, with its own message: never a silent
// mismatch.
//
// # How a hook command runs, and why
//
//   - Shell: bash -c <command>, as upstream's executor (bash-local) does.
//   - Process: through sandbox/spawn, the same real spawning the bash tool
//     uses: a new session and process group; on timeout or cancellation the
//     group gets SIGTERM, then SIGKILL after 3 s (upstream's graceMs).
//   - Sandbox: [Runtime.Sandbox], the deployment's default mode rooted at
//     the configured root, never the session's mode override, because
//     upstream's hook request carries no policy and the sandboxing executor
//     stamps the deployment default. danger-full-access (the snapshot
//     setting) runs unconfined; a confined mode that cannot start is a
//     non-blocking failure, as upstream's throwing runner is.
//   - Directory: the session cwd when the call's agent has one, else
//     [Runtime.DefaultDir] (upstream: the executor default).
//   - Environment: the parent's minus names matching KEY, PASSWORD, SECRET
//     or TOKEN (any case) and DSH_*; then NO_COLOR=1, TERM=dumb, PAGER=cat,
//     GIT_PAGER=cat; then, for Claude Code, CLAUDE_PROJECT_DIR (the
//     projectDir option, else the session cwd).
//   - stdin: the dialect's payload (JSON.stringify byte for byte, keys in
//     upstream's order; package internal/jsjson), plus "\n" for Claude Code.
//   - Output: each stream keeps its last 64 000 bytes; an overflow file is
//     removed after the run (no hook reads it). Both are trimmed with
//     JavaScript's trim() before decoding.
//   - Timeout: the hook's seconds × 1000 (Codex: "timeoutSec" too), else the
//     default 600 000 ms, capped at 600 000; zero, negative or infinite
//     never starts and records MsgBadTimeout as the stderr (fail open).
//
// # Decisions
//
// Exit 2 blocks with stderr as the reason; exit 0 with a JSON object on
// stdout may decide (decision approve/block, or hookSpecificOutput with the
// firing point's hookEventName: permissionDecision allow/deny/ask,
// permissionDecisionReason, additionalContext); anything else decides
// nothing. Within a bridge every matching hook runs (no short-circuit) and
// the merge takes deny > ask > allow > none, joining the winning rank's
// reasons with a blank line. Pre: deny → the pipeline's deny (fallback
// "blocked by PreToolUse hook"), Claude Code ask → the pipeline's ask, the
// rest → next (an allow pre-approves nothing; a Codex ask is an allow).
// Post: deny → block with the reason as feedback (fallback "blocked by
// PostToolUse hook"), else next; additionalContext becomes one
// [pipeline.ContextMessage] from the bridge's plugin, first among the
// decision's. continue:false, stopReason, systemMessage and updatedInput
// are decoded, logged where upstream logs them, and never acted upon.
//
// # Handler ids
//
// "<dialect>:<point>:<n>" with one counter per [Bridge] across all its
// points (upstream: per process, with one bridge per process), bumped by
// every matched run, logged or not (the lifecycle points'). Concurrent replays in one Go process therefore each start
// at 1, as upstream's one-process-per-scenario runs do.
//
// # Fail open, and the strict switch
//
// Upstream fails open: a config it cannot load, a hook that cannot start, a
// timeout ≤ 0, a timeout or signal death, exit 126/127: the call goes ahead.
// This package reproduces that by default and offers Options.Strict, which
// denies every call while a config (other than a missing one) cannot be
// loaded, and blocks a call whose hook could not run (logged as "block" with
// the reason). A cancelled call is never blocked by strict: the cancellation
// decides. A session log that cannot be read or appended to fails the call
// in both modes.
//
// # Turn points
//
// [Bridge.PromptSubmit] runs the UserPromptSubmit hooks for an agent's
// pre-step that claimed messages (the payload's prompt is their text,
// [PromptText]); a deny rejects the turn before its step, additional
// context (Codex: also a clean exit's plain stdout) becomes one message of
// the bridge's plugin. [Bridge.Stop] runs the Stop hooks when a turn would
// stop; a deny returns the steering message (the reason, else
// [FallbackStopReason]) that forces another step. Both are logged like the
// tool points, without a matcher (it is discarded at these points), and
// share the bridge's handler ids. The agent loop calls them (the replay's
// driver); the bridge only decides. Under the strict switch a
// UserPromptSubmit hook that cannot run rejects the turn; a Stop hook that
// cannot run does not steer (a block would force steps forever).
//
// # Lifecycle points
//
// [Bridge.SessionStart] (a session, and each child, when it is published:
// source "startup", or "resume" for a cold-resumed child),
// [Bridge.SubagentStart] and [Bridge.SubagentStop] (Claude Code only,
// around a child's run or activation; the matcher subject is
// [SubagentType]) run detached, as upstream's listeners of
// agent/session-start, subagent/start and subagent/end do: they log no
// hook/* events (there is no turn) and decide nothing, but they take their
// handler ids from the same counter, the first at once, so the ids of the
// points after them are shifted as upstream's are. Their context (Codex: a
// SessionStart hook's clean plain stdout too) is handed to the caller once
// they have run, which enters it at the agent's next step without waking
// it; whether that is the first step races the hook, upstream's too.
// [Bridge.Drain] cancels the runs still going and waits for them (the
// stack's Close).
package hooks
