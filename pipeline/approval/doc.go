// Package approval is the approval service: the mechanism that asks the
// user (through a chain of answerers) whether one action may run once.
//
// # Outcomes
//
// allowed-once, rejected, cancelled, unavailable (VERBATIM). Only
// allowed-once lets an action through, and only that one action.
//
// # Request
//
// [Service.Request] requires an open turn in the agent's session log (else
// an error beginning "approval.request() outside an open turn", nothing
// appended), appends approval/asked {id, toolName, callId?, reason?} with a
// fresh random UUID, decides, and appends approval/decided {id, outcome}:
//
//   - the caller's context already done → cancelled, no answerer asked;
//   - policy never (last approval/policy in the log, else the configured
//     policy, else ask) → rejected, before any answerer runs, so no answerer
//     (even one prepended later) can bypass it;
//   - else the answerer chain: the first answer wins, next() delegates, the
//     terminal is unavailable; an error, a panic or an answer outside the
//     vocabulary → unavailable;
//   - the context done while waiting → cancelled at once; the late answer is
//     discarded.
//
// Append failures are errors: a decision is never returned unlogged.
//
// # Policy
//
// [SetSessionPolicy] appends approval/policy {policy}; [Service.SetPolicy] is
// the live switch that also writes the VERBATIM change notice as a
// user/message with upstream's source {kind:"plugin", plugin:"user-approval"}
// and surfaceOp append. Departure: upstream's setPolicy queues the notice
// for the agent's next step (agent.inject: an agent/inbox/spliced into
// next-step, entered as that step's user/message); with no inbox here the
// notice is appended at once, so it precedes the next step/start instead of
// following it. [ContextText] is the model-facing approval:policy sentence.
//
// # Imports
//
// approval imports pipeline and pipeline/session; it must not import
// tools/..., stack or harness/... (test tooling).
package approval
