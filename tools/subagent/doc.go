// Package subagent holds the model-facing delegation tools as upstream
// composes them: the delegation tool instances (subagent, subagent_fork,
// product instances such as subagent_codex), send_message, interrupt_agent,
// list_agents, and the report tool a continuable child gets in its own
// scope: [New] returns the instances' registrations (and the control
// tools'), [Report] the report tool's. Schemas, descriptions, prompt
// sections and result texts are upstream's VERBATIM, as its recorded
// sidecars pin them.
//
// # Routing one delegation
//
// An [Instance] names its provider and background mode. A continuable
// instance runs in the background unless the call sets run_in_background
// false ("started subagent <id>": a continuable child, later turns from
// send_message, a settlement notice); a one-shot instance waits unless it
// is true (a background job subagent-<n>, "started background subagent job
// <id>", collected with job_output); an instance without background refuses
// true. A foreground run is collected and disposed ([SettleForeground]): a
// child that did not complete fails with its headline, the provider's
// diagnostic and its partial output; a run and a disposal that both fail
// give upstream's aggregate "subagent run failed: ...; dispose failed: ...".
//
// # The runtime below
//
// The tools do no lifecycle work themselves: [Service] (the composition's
// delegation runtime, package stack/subagents) creates children, runs them, relays messages and lists
// them. The tools only route, render and settle, so the same tools sit on
// any runtime, and tests stand them on a constructed one.
//
// # Imports
//
// pipeline, pipeline/delegation (stop reasons and texts), tools/jobs (the
// background jobs) and tools/toolreg (the registrations); never stack.
package subagent
