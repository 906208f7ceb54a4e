// Package workflow holds upstream's workflow tool: the model writes a plain
// JavaScript body that orchestrates subagents (agent(), parallel(),
// pipeline(), phase(), log(), args), and the tool runs it and renders its
// return value. The name, description, schema, prompt section (tool:workflow,
// order 115), the meta checks ([ValidateMeta]) and every result and error
// text are upstream's VERBATIM, as the recorded sidecars and the oracle
// recording workflow-oracle-parallel pin them.
//
// # The body runs where run_code's programs run
//
// Upstream runs the body in a worker thread. We run it in run_code's Node
// runtime (tools/code/noderuntime), in its workflow mode: a fresh child
// confined by bash's provider under the call's sandbox policy, the body in a
// fresh vm context holding only the six hooks (no require, timers, fs or
// network), with upstream's option checks, caps (concurrent agents, total
// agents, items per call, the synchronous-slice timeout) and default label.
// A body that does not parse is a SCRIPT_PARSE error and records nothing;
// one that carries an `export const meta` statement is refused before it
// runs.
//
// # Agents and events
//
// Each agent() is a one-shot spawn child of the calling agent, started
// through the delegation runtime ([subagent.Service], package stack) and
// driven by the application's agent loop; it resolves to the child's final
// text, or null when the child did not complete. A top-level call records
// its run in the caller's log: tool-workflow/run-start {runId, name} once
// the body parsed, tool-workflow/agent-start {runId, seq, label, phase?,
// childId} and tool-workflow/agent-end {runId, seq, outcome} for each
// agent, and tool-workflow/run-end {runId, stopReason}. The result text is
// `workflow "<name>" completed (<n> agent|agents).\nReturn value:\n<JSON
// indented by two>`, clipped at 50000 UTF-16 units with upstream's
// truncation line; the tool's value is {runId, agentsStarted, result} in
// that key order. A return value holding -0 completes the run and fails the
// call as upstream's output snapshot does (`tool "workflow" returned invalid
// output: value is not lossless JSON`, INVALID_TOOL_OUTPUT). A thrown value,
// an Error or not, is rendered as upstream's engine renders it: its stack,
// else its message, else String(value).
//
// # Ours
//
// agent(prompt, {readOnly: true}) is the read-only workflow step
// (docs/stack.md): the child is delegated with Delegation.ReadOnly, so only
// the read-only tools are offered and a guard in its scope denies the rest,
// named by its label. Upstream rejects the option as unknown.
//
// # Structured output
//
// agent(prompt, {schema}) starts a structured child (subagent.Request's
// OutputSchema): its own structured_output tool takes the schema, and the
// agent() resolves to what it recorded, or null when it completed without
// recording (upstream's readResult: a failed agent). The body's agent()
// first checks the schema against the subset structured output takes
// (package noderuntime, as upstream's engine does before a child starts):
// outside it, agent() throws UNSUPPORTED_SCHEMA naming every violation.
//
// # Imports
//
// pipeline, pipeline/delegation, tools/subagent (the service and request),
// tools/code/noderuntime, tools/toolreg (the registration) and the sandbox
// spawn types; never stack.
package workflow
