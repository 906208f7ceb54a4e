// Package subagents is the delegation runtime of a stack: it delegates
// child agents as upstream's in-process spawn and fork do, and runs them.
// The stack (the composition root, package stack) composes it and is its
// [Host]; the delegation tools (tools/subagent, tools/workflow) drive it
// as their [subagent.Service].
//
// # Delegation
//
// [Runtime.Delegate] starts a child ([Child]): its own log seeded with the
// parent's sandbox override and the never pin, its scope a sibling of the
// parent's under the agent preset's standing scope, the host's tools and
// approval service (delegate.go). Delegation.ReadOnly makes it a workflow
// step restricted to [ReadOnlyTools], Delegation.Sandbox narrows its mode
// (never wider than the parent's). A child is an agent surface like the
// session's: its loop drives it through its tools, calls, runtime context,
// skill catalog and prompt sections, each answered by the host.
//
// # Running children
//
// With a [Config] (the stack's Config.Subagents; [Default] is upstream's ACP
// composition) the runtime runs children: one-shot runs driven through one
// turn (runs.go), continuable children (continuable.go: a descriptor at the
// head of the log, report in their own scope, later turns from
// send_message, a cold resume from the log once settled, a settlement
// notice to the parent: a new turn of an idle parent, the next step of a
// busy one), interrupt_agent and list_agents (runtime.go), and providers
// beyond spawn and fork ([Provider]). A child persisted before the runtime
// started (a resumed session's) is adopted from its log ([Runtime.Adopt],
// cold.go): its descriptor folds its identity, and one without a readable
// descriptor is a list_agents diagnostic ("corrupt"), never dropped. The runtime drives no model: every
// child's loop is the application's agent loop ([Loop], started by
// [Loops]); the runtime hands loops messages and waits for them to be idle.
//
// # Imports
//
// pipeline and its delegation, policy and session packages, sandbox (a
// mode), tools/subagent (the service it implements), tools/skill (the
// catalog message) and tools/toolreg (the report tool's registration);
// never stack (its host) or harness/...
package subagents
