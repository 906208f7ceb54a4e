// Package stack composes the whole tool stack the way a deployment does, for
// dsh-replay and the sims: the session-scoped policy resolver and runtime
// context (pipeline/policy), the approval service with one answerer
// (pipeline/approval), escalation, the sandbox confiner (package
// sandbox/chain: bwrap, then Landlock on Linux, applied in this process by
// default with the runner as its fallback, optionally capped at an older
// ABI), the bash
// tool (tools/bash) with the job registry and the job tools (tools/jobs:
// admission bound, completion notices handed to Config.JobNotify), the file
// tools with read-before-write observation and the confining fence
// (tools/fs), session_event_read and session_event_search when
// Config.SessionQuery (tools/sessionquery), and the spill policy (spill, byte
// budget as upstream's snapshot overlay used it), all in one pipeline
// registry. [Stack.Definitions] lists what the model is offered.
//
// # Use
//
//	s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite,
//		Approval: stack.ApprovalAsk, Answer: answerer, SpillRoot: root, SpillMaxInlineBytes: 800})
//	s.SyncContext(ctx)                          // append the runtime context when it changed
//	res := s.Execute(ctx, callID, "bash", args) // one call through the pipeline
//	s.Close()
//
// Approvals are audited into the session log by the approval service
// (approval/asked, approval/decided); the caller appends its own turn, step,
// message, tool/call and tool/result events.
//
// # Scopes, delegation, Auto review
//
// The session's agent sits under the agent preset's standing scope
// ([Stack.Standing]); [Stack.In] and [Stack.Answers] register listeners,
// guards, wrappers, restrictions and answerers for a scope. [Stack.Delegate]
// starts a child agent as upstream's in-process spawn does (package
// stack/subagents, the delegation runtime): its own log seeded with the parent's sandbox override and the
// never pin, its scope a sibling of the parent's under the standing scope,
// the stack's tools and approval service; Delegation.ReadOnly makes it a
// workflow step restricted to read-only tools, Delegation.Sandbox narrows
// its sandbox mode (never wider than the parent's). Config.AutoReview switches
// Auto review on for the session's agent: a call the reviewer approved
// resolves its sandbox mode as danger-full-access, for that call only.
//
// # Subagents
//
// Config.Subagents ([DefaultSubagents] is upstream's ACP composition)
// composes delegation (package stack/subagents; subagents.go, workflow.go):
// the delegation tools of package tools/subagent over a
// runtime of children: in-process spawn and fork children (a fork's log
// seeded with the parent's completed turns), one-shot runs driven through
// one turn, continuable children (a descriptor at the head of the log,
// report in their own scope, later turns from send_message, a cold resume
// from the log once settled, a settlement notice to the parent: a new turn
// of an idle parent, the next step of a busy one), interrupt_agent and
// list_agents, ask_user_question (refused for a delegated caller), other
// providers ([Provider]) and the workflow tool, whose body runs in
// run_code's Node runtime. The stack drives no model: every agent is a
// [Surface] (the session's agent, each [Child]) that the application's agent
// loop ([Loop], started for each child by SubagentsConfig.Loops) drives;
// the delegation runtime hands loops messages and waits for them to be
// idle.
//
// # Tools modes
//
// Config.ToolsMode code or both adds run_code (tools/code, code.go): every
// program runs in a Node child confined by the bash tool's confiner under
// the call's policy, and its nested calls go through this registry. Code
// mode offers run_code alone ([Stack.WireTools]) and collapses a direct call
// of any other tool; [Stack.PromptSections] adds tools:code-only and
// tools:sdk to the tools' sections.
//
// # Tools beyond the safety stack
//
// extras.go composes, each only when configured: todo_write (Config.Todo),
// the skill tool and its catalog ([Stack.PendingCatalog] for an agent
// loop's pre-step, [Stack.SyncCatalog] to append it; Config.Skills),
// read_image with the attachment store (Config.Images, with the file
// tools), glob and grep (Config.FileSearch; a capped result is saved in
// spill's store when spill is on), the terminal tools (Config.Terminal),
// lsp (Config.LSP; its servers confined by bash's provider, the runner
// under Landlock, like a workspace-write command), pwsh (Config.Pwsh), the seven cordis_* tools
// and their prompt section (Config.Cordis) and web_fetch (Config.WebFetch). Config.Served serves the
// bodies of named tools (and of pwsh where PowerShell does not run, and of the cordis tools, whose
// Cordis host never runs here) from a recording
// ([Stack.Served] lists them); [New] refuses it for bash, read, write, edit,
// run_code and the job tools. Config.Without leaves parts of the default
// profile out as upstream's standalone overlays do (no policy plugins:
// bash unconfined, no runtime context).
//
// # Fail closed
//
// [New] refuses a configuration with a piece missing or wrong (no answerer
// under policy ask, an unknown mode or policy, a relative workspace, a spill cap
// without a root): the error names the piece. The sandbox confiner never runs
// a confined call unconfined; when no backend is usable the call fails with
// SANDBOX_UNAVAILABLE.
//
// # Files
//
// compose.go composes the stack in one function, in the order a reader
// sees: the shared pieces (policy resolver, approval service, escalation,
// the agent's scope, spill), then the tools, one area per step (addBash,
// addCode given bash's sandbox provider, addFS, addHooks, addSessionQuery,
// addExtras), each step in its own file (bash.go, code.go, fs.go, hooks.go,
// sessionquery.go, extras.go); spill's listener goes on last. Nothing registers itself:
// there is no init function and no registry filled as a side effect.
//
// # Imports
//
// stack is the composition root: it imports the tools (tools/bash, tools/fs,
// tools/jobs, tools/sessionquery, tools/code and the tools beyond the
// safety stack), attachment, the pipeline and its approval, policy and session packages,
// escalation, fsobserve, spill and sandbox. It must not import harness/...
// (test tooling); nothing but the test tooling (the replay, the sims) and
// the commands imports it.
package stack
