// Package stack is the composition root: it composes the whole tool stack
// the way a deployment does, for dsh-replay and the sims. The shared pieces
// come first: the session-scoped policy resolver and runtime context
// (pipeline/policy), the approval service with one answerer
// (pipeline/approval), escalation, the session's agent under its preset's
// standing scope, the delegation runtime (package stack/subagents) and the
// spill policy. Then the tools, one line of the composition each (a
// package's New bound to its configuration: tools/toolreg), registered in
// one pipeline registry; then the listeners around them. [Stack.Definitions]
// lists what is registered, [Stack.WireTools] what the model is offered.
//
// # Use
//
//	s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite,
//		Approval: stack.ApprovalAsk, Answer: answerer, Spill: stack.SpillConfig{Root: root, MaxInlineBytes: 800}})
//	s.SyncContext(ctx)                          // append the runtime context when it changed
//	res := s.Execute(ctx, callID, "bash", args) // one call through the pipeline
//	s.Close()
//
// Approvals are audited into the session log by the approval service
// (approval/asked, approval/decided); the caller appends its own turn, step,
// message, tool/call and tool/result events.
//
// # A tool is its registration
//
// Each tool package's New returns registrations (toolreg.Tool): the
// definition and every fact the stack reads about the tool. The prompt
// sections ([Stack.PromptSections]: each visible tool's, by order, equal
// orders in registration order, and the sections run_code computes for its
// mode), the host-yield rule ([Stack.Yields]: the job gate is pumped after a
// call that awaits I/O), concurrency, what Close releases, and whether a
// recording may serve the body ([Stack.SafetyStack]: never for bash, read,
// write, edit, run_code and the job tools; Config.Served names the others,
// unhosted ones are served whenever a recording is given, [Stack.Served]
// lists them) all come from there. Config.Tools adds a deployment's own
// tools by the same one line (docs/stack.md, Adding a tool).
//
// # The composition
//
// compose.go composes, in this order: the shared pieces; the lines of the
// composition (lines), one loop registering them: bash and the job tools
// (bash.go: the sandbox confiner, the platform chain with Landlock in this
// process and the runner as its fallback, comes from here), run_code in
// code and both modes (code.go, confined by that confiner; code mode offers
// it alone and collapses a direct call of any other tool), the file tools
// with read-before-write observation and read_image (fs.go), session query
// (sessionquery.go), delegation (subagents.go, workflow.go: the delegation
// tools, ask_user_question, the workflow tool over the runtime), then the
// tools beyond the safety stack (extras.go: todo_write, the skill tool and
// its catalog, glob and grep, pwsh, the terminal tools, lsp, the cordis
// tools, web_fetch) and Config.Tools; then the listeners (addListeners:
// the repeated-call reminder, the hook bridges in hooks.go); spill's goes on
// last, outermost. Config.Without leaves parts of the default profile out as
// upstream's standalone overlays do. Nothing registers itself: there is no
// init function and no registry filled as a side effect.
//
// # Scopes, delegation, Auto review
//
// The session's agent sits under the agent preset's standing scope
// ([Stack.Standing]); [Stack.In] and [Stack.Answers] register listeners,
// guards, wrappers, restrictions and answerers for a scope (scopes.go).
// [Stack.Delegate] starts a child agent ([Child]) through the delegation
// runtime; Config.Subagents ([DefaultSubagents] is upstream's ACP
// composition) runs children, each driven by the application's agent loop
// ([Loop]). The session's agent and every child are a [Surface] (surface.go).
// Config.AutoReview switches Auto review on for the session's agent: a call
// the reviewer approved resolves its sandbox mode as danger-full-access,
// for that call only.
//
// # Fail closed
//
// [New] refuses a configuration with a piece missing or wrong (no answerer
// under policy ask, an unknown mode or policy, a relative workspace, a spill
// cap without a root, a served tool of the safety stack): the error names
// the piece, and what was composed is released. The sandbox confiner never
// runs a confined call unconfined; when no backend is usable the call fails
// with SANDBOX_UNAVAILABLE.
//
// # Imports
//
// stack imports the tools (tools/...), stack/subagents, attachment, the
// pipeline and its approval, autoreview, policy, repeat and session
// packages, escalation, fsobserve, hooks, spill and sandbox. It must not
// import harness/... (test tooling); nothing but the test tooling (the
// replay, the sims) and the commands imports it.
package stack
