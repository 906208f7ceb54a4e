// Package stack composes the whole tool stack the way a deployment does, for
// dsh-replay and the sims: a session-scoped policy resolver, the approval
// service with one answerer, escalation, the sandbox provider and executor,
// the bash tool, the file tools with read-before-write observation, spill and
// rendering, all registered in one pipeline registry.
//
// # Use
//
//	s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite,
//		Approval: stack.ApprovalAsk, Answer: answerer, SpillRoot: root})
//	ctxMsg, err := s.RuntimeContext(ctx)        // what the model sees next
//	res := s.Execute(ctx, callID, "bash", args) // one call through the pipeline
//	s.Close()
//
// # Fail closed
//
// [New] refuses to build a stack with a piece missing or misconfigured (no
// answerer, an unknown mode or policy, a relative workspace): the error names
// the piece. Nothing runs unconfined because a piece was absent.
package stack
