// Package autoreview is Auto review, the documentation page's experimental
// option (off by default): before a call runs, a reviewer (a model) rates its
// risk; an approved call runs with full access, a rejected one becomes an
// approval question to the user.
//
// No upstream code implements it (the page describes the option only); the
// design is ours, built behind upstream's pre-execute and approval seams:
//
//   - A pre-execute listener, prepended, lets every other listener decide
//     first ([pipeline.PreExecute] next) and turns a call they allowed into
//     an ask with the reason [AskReason]; deny, cancel and ask stand.
//   - An approval answerer, prepended ahead of the human answerer, answers
//     the asks the pipeline makes for calls of the reviewed tools: approve →
//     allowed-once plus a full-access grant for that one call
//     ([Gate.FullAccess]; the composition resolves the call's sandbox mode
//     as danger-full-access, like an approved escalation); reject → next(),
//     so the human answerer is asked, with the verdict in the user-only
//     DisplayReason; a reviewer error, panic or time-out → unavailable:
//     never allowed-once, and the human is not asked either.
//   - Asks made from inside a tool body (sandbox escalations) are not
//     reviewed: a wider sandbox is the user's to grant.
//   - Guards still run after an approval, so a scoped deny beats the
//     reviewer; the never policy rejects before any answerer runs.
//
// Each review appends auto-review/decided {callId, toolName, reviewer,
// outcome, risk?, rationale?, error?} to the agent's session log, between the
// standard approval/asked and approval/decided pair; outcome is approved,
// rejected, error or timeout. This event is our vocabulary.
//
// [Gate.Install] registers through scoped surfaces, so Auto review can be
// switched on for one agent: a delegated child's scope is not below its
// parent's, so children are never reviewed.
//
// [Reviewer] is what a model client implements; [ModelReviewer] adapts a
// plain text completion function with [Prompt] and [ParseVerdict].
//
// It must not import harness/..., tools/..., sandbox/... or stack: the
// composition root maps a grant to a sandbox mode.
package autoreview
