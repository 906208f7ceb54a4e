package subagent

// VERBATIM model-facing texts of upstream's subagent tools, as the recorded
// tool-schemas sidecars pin them.
const (
	// FreshDescription and ForkDescription are the provider wordings: a
	// fresh child (spawn) and one that inherits the conversation (fork).
	FreshDescription = "Delegate a self-contained task to a subagent (a separate agent that works in its own context) to offload focused, independent work — research, a scoped implementation, an analysis — so it does not consume this conversation's context. The subagent returns its result, not its intermediate steps. Give it a complete, standalone prompt: it does not see this conversation."
	ForkDescription  = "Delegate a task to a subagent that inherits this conversation: a child agent seeded with all completed turns so far (it does not see the current in-flight turn). Use this when the subtask builds on this conversation's context — a follow-up analysis, a review, a continuation — without consuming this conversation's context for the work itself. You receive its result, not its intermediate steps."
	// FreshPrompt and ForkPrompt describe the prompt parameter.
	FreshPrompt = "The complete, self-contained task for the subagent. It does not share this conversation's context, so include everything it needs."
	ForkPrompt  = "The task for the subagent. It already sees this conversation's completed turns, so build on them freely and state only what is new."
	// LabelDescription describes the description parameter.
	LabelDescription = "A short (3-5 word) description of the delegated task, for display."
	// ContinuableSuffix, OneShotSuffix and ForegroundSuffix end the
	// description by background mode (one space before each).
	ContinuableSuffix = "This tool runs in the background by default, immediately returns a durable subagent id, and keeps the child conversation available for later turns. When that run settles, the runtime sends the parent a notice containing its outcome and any final assistant message; `send_message` starts a later turn in the same child conversation. Set `run_in_background: false` only when your next action depends on receiving the result."
	OneShotSuffix     = "This call waits for the result by default. Set `run_in_background: true` to return a job id; collect with `job_output` and stop with `job_kill`."
	ForegroundSuffix  = "This call waits for the subagent and returns its result."
	// ContinuableBackground and OneShotBackground describe run_in_background.
	ContinuableBackground = "Whether to run in the background and return a durable subagent id immediately. Defaults to true. Set false to wait for the result when your next action depends on it."
	OneShotBackground     = "Whether to run as a background job and return its id. Defaults to false; collect with job_output or stop with job_kill."

	// SendMessageDescription and its parameters.
	SendMessageDescription = "Send a message to a background subagent by its subagent id, continuing the same conversation. It becomes the subagent's next turn: if it is still working, the message waits until its current turn finishes, so it cannot redirect work already underway. This call returns no answer from the subagent — only confirmation that the message was delivered — so use it to give it more work. A failure means the message was NOT delivered."
	SubagentIDDescription  = "The subagent id returned when the background subagent was started."
	MessageDescription     = "The message to deliver to the subagent."

	// InterruptDescription and its parameter.
	InterruptDescription = "Request cancellation of a background agent's current turn by its agent id. The target may be your direct child or a deeper agent created under you. Only the current turn stops: messages already queued for the agent stay parked until a later send_message, agents it started keep running, and the agent itself stays available for follow-ups. This call returns as soon as the stop request is accepted, so the target may keep running briefly; interrupting an agent that already finished is an accepted no-op."
	AgentIDDescription   = "The agent id of the running agent to interrupt."

	// ListDescription and its parameter.
	ListDescription  = "List your continuable background subagents by durable id and label. Use it to recall which ones you started, not to poll for completion — you are told when one finishes. Status comes from the live registry: running means the agent is working right now, idle means it is loaded but between turns (it may be waiting on agents it started), and ready means it exists only in storage — resumable, not terminal, and not a result waiting to be collected; a `send_message` starts a new turn on the same conversation, and a direct child remains a `send_message` candidate in every status. The snapshot is not a delivery promise — `send_message` performs the authoritative check and may still fail. Children that could not be read are reported as diagnostics instead of being silently dropped. Scope `descendants` walks the whole tree below you in stable pre-order, annotating each entry with its durable direct-parent session id and depth. You may use `send_message` only for depth-1 entries; deeper entries are candidates for `interrupt_agent` only."
	ScopeDescription = "children (default) lists direct children only; descendants walks the complete tree below you."
	// NoSubagents is list_agents' answer when there is nothing to list.
	NoSubagents = "(no subagents)"

	// ReportDescription, its parameter and its prompt section (order 117).
	ReportDescription = "Report selected content to the agent that started you. Call this once before you finish, with a self-contained final result, and earlier for progress or findings that change what that agent does next. That agent shares your workspace but does not automatically receive your transcript, tool output, or reasoning, so finishing your work is not itself a result. Reporting does not end your turn or finish your work, and only your direct parent receives it. A failed call may still have arrived, so do not blindly repeat it."
	OutputDescription = "Actionable content for your parent; summarize conclusions and reference relevant shared paths."
	ReportSection     = "Deliver your result with the report tool before you finish: call it once with a self-contained answer. The agent that started you shares your workspace but does not automatically receive your transcript, tool output, or reasoning, so a closing remark such as \"done\" leaves it nothing it can use. Report earlier as well whenever a partial finding changes what that agent should do next; reporting never ends your turn."
)

// Section orders of the prompt sections these tools bring.
const (
	// ContinuableSectionOrder is a continuable instance's tool:<name> section.
	ContinuableSectionOrder = 116.5
	// ReportSectionOrder is the tool:report section of a continuable child.
	ReportSectionOrder = 117
)

// ContinuableSection is the tool:<name> section of a continuable instance
// with background runs on (VERBATIM, the leading name the instance's).
func ContinuableSection(toolName string) string {
	return "Use " + toolName + " in the background by default. Start independent delegations together in one assistant message and continue useful work while they run. Set `run_in_background: false` only when your next action depends on that subagent's result. When a background run settles, the runtime sends you a notice containing its outcome and any final assistant message."
}
