package session

// The event kinds (an [Event]'s Type): upstream's session log schema, every
// kind a log of ours or a recording may hold. Each is spelled here and
// nowhere else outside tests (a test of the harness fails on a literal
// elsewhere); [Kinds] lists them all.
const (
	// Turns and steps: turn/start {turn} and turn/end {turn, reason}
	// ([TurnStart], [TurnEnd]) bracket a turn; step/start and step/end
	// {turn, step} ([Step]) each step of it.
	KindTurnStart = "turn/start"
	KindTurnEnd   = "turn/end"
	KindStepStart = "step/start"
	KindStepEnd   = "step/end"

	// Messages: a user message entered into the conversation, the model's
	// streamed chunks ([AssistantChunk]) and its assembled message
	// ([AssistantMessage]), and every change of the agent's inbox (a prompt
	// queued, a notice delivered, a step's claim).
	KindUserMessage      = "user/message"
	KindAssistantChunk   = "assistant/chunk"
	KindAssistantMessage = "assistant/message"
	KindInboxSpliced     = "agent/inbox/spliced"

	// Model requests: the request header (config, system prompt, tools) and
	// context (the route, [RequestContext]), a failed call's retry and the
	// start of the retried attempt ([Retry], [RetryStarted]), the session's
	// title and the title model's own request.
	KindRequestHeader  = "request/header"
	KindRequestContext = "request/context"
	KindRetry          = "llm/retry"
	KindRetryStarted   = "llm/retry-started"
	KindTitle          = "session/title"
	KindTitleRequest   = "session/title-llm-request"

	// Compaction: a compaction opens ({compactionId, turn}), records its
	// summary and the range it shadows, then closes ({compactionId, turn,
	// error?}); the checkpoint message between summary and end replaces the
	// range on the surface.
	KindCompactionStart   = "compaction/start"
	KindCompactionSummary = "compaction/summary"
	KindCompactionEnd     = "compaction/end"
	// KindCompactionPrune is the tool-result pruner's shadow price
	// ({shadowedRange, shadowedSeqs, shadowedTokenCount}) before the
	// shortened tool/result replacing the one it names.
	KindCompactionPrune = "compaction/prune"

	// Tool calls: a call ([ToolCall]) and its result; run_code's nested
	// calls (a start and a settle event per call); todo_write's snapshot of
	// the list, between its call and its result; the workflow tool's run and
	// its agents, in the parent's log.
	KindToolCall           = "tool/call"
	KindToolResult         = "tool/result"
	KindCodeDispatchStart  = "tool/code-dispatch-start"
	KindCodeDispatch       = "tool/code-dispatch"
	KindTodoWrite          = "todo/write"
	KindWorkflowRunStart   = "tool-workflow/run-start"
	KindWorkflowAgentStart = "tool-workflow/agent-start"
	KindWorkflowAgentEnd   = "tool-workflow/agent-end"
	KindWorkflowRunEnd     = "tool-workflow/run-end"

	// Approval and permissions: a call's approval asked and decided (same
	// id), a switch of the approval policy ({policy, source?}), of the
	// sandbox mode ({mode, source?}; the last one wins), the user's
	// permission preset ({preset}: intent only, never controls execution),
	// and (ours, never in a recording) the audit of one automatic review.
	KindApprovalAsked     = "approval/asked"
	KindApprovalDecided   = "approval/decided"
	KindApprovalPolicy    = "approval/policy"
	KindSandboxMode       = "sandbox/mode"
	KindPermissionPreset  = "permission/preset"
	KindAutoReviewDecided = "auto-review/decided"

	// Hooks: a user hook invoked, and its result.
	KindHookInvoked = "hook/invoked"
	KindHookResult  = "hook/result"

	// Delegation: a child's descriptor, and the end of its seed (a fork's
	// copied prefix, a continuable child's descriptor): what follows is the
	// child's own.
	KindSubagentDescriptor = "subagent/descriptor"
	KindEndSeed            = "session/end-seed"

	// Goals: a change of the session's durable goal (a full snapshot
	// {kind, version, operation, goal, roundsStarted, createdAt, updatedAt},
	// or a clear tombstone), between the goal tool's call and its result.
	KindGoalChange = "goal/change"

	// Plan mode: the session's plan mode switched ({active}; the last one
	// wins), by a user's /plan or at the step after an approved plan.
	KindPlanMode = "plan/mode"

	// Commands: a slash command run, and done.
	KindCommandRun  = "command/run"
	KindCommandDone = "command/done"
)

// Kinds returns the event kinds, in the order of their declaration.
func Kinds() []string {
	return []string{
		KindTurnStart, KindTurnEnd, KindStepStart, KindStepEnd,
		KindUserMessage, KindAssistantChunk, KindAssistantMessage, KindInboxSpliced,
		KindRequestHeader, KindRequestContext, KindRetry, KindRetryStarted, KindTitle, KindTitleRequest,
		KindCompactionStart, KindCompactionSummary, KindCompactionEnd, KindCompactionPrune,
		KindToolCall, KindToolResult, KindCodeDispatchStart, KindCodeDispatch, KindTodoWrite,
		KindWorkflowRunStart, KindWorkflowAgentStart, KindWorkflowAgentEnd, KindWorkflowRunEnd,
		KindApprovalAsked, KindApprovalDecided, KindApprovalPolicy, KindSandboxMode, KindPermissionPreset, KindAutoReviewDecided,
		KindHookInvoked, KindHookResult,
		KindSubagentDescriptor, KindEndSeed,
		KindGoalChange,
		KindPlanMode,
		KindCommandRun, KindCommandDone,
	}
}
