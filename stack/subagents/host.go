package subagents

import (
	"context"
	"encoding/json"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/skill"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Host is the composition the runtime delegates from (the stack): where a
// child joins it, and what every agent of it is offered, runs and sees.
type Host interface {
	// Agent is the session's agent (the parent of a delegation that names
	// none); Standing the agent preset's standing scope every child joins.
	Agent() *pipeline.Agent
	Standing() *pipeline.Scope
	// In is the registration surface of scope in the host's pipeline.
	In(scope *pipeline.Scope) pipeline.Scoped
	// RegisterIn registers t in sc, its registration kept like the host's
	// own (a continuable child's report tool).
	RegisterIn(sc pipeline.Scoped, t toolreg.Tool) error
	// DefaultMode is the deployment's sandbox mode.
	DefaultMode() sandbox.Mode
	// Definitions are the registered tools, in registration order.
	Definitions() []pipeline.Tool

	// ToolsFor are the tools agent sees, in registration order; WireTools
	// the ones its model is offered, sorted by name.
	ToolsFor(agent *pipeline.Agent) []pipeline.Tool
	WireTools(agent *pipeline.Agent) []pipeline.Tool
	// PromptSections are the system-prompt sections the host owns for agent.
	PromptSections(agent *pipeline.Agent) ([]toolreg.Section, error)
	// Execute runs one call of agent through the pipeline.
	Execute(ctx context.Context, agent *pipeline.Agent, callID, name string, args json.RawMessage) pipeline.Result
	// RuntimeContext renders the runtime context of log with extra
	// sections; PendingContext is the message a step of log's agent would
	// enter (nil: unchanged).
	RuntimeContext(log *session.Log, extra ...policy.Section) (RuntimeContext, error)
	PendingContext(log *session.Log, extra ...policy.Section) (*policy.SnapshotMessage, error)
	// PendingCatalog is the skill catalog message a step of log's agent
	// would enter (nil: none, or unchanged).
	PendingCatalog(log *session.Log) (*skill.Message, error)
	// UserMessageEntered tells the host that a step of agent entered a
	// user's message.
	UserMessageEntered(agent *pipeline.Agent)

	// SessionStarted, SubagentStarted and SubagentEnded are the lifecycle
	// edges upstream emits for a child (agent/session-start when it is
	// published, "startup" or "resume"; subagent/start once its run or
	// activation starts; subagent/end when it settles): the host runs its
	// hooks of those points, detached; inject enters their context at the
	// child's next step.
	SessionStarted(agent *pipeline.Agent, source string, inject func(pipeline.ContextMessage))
	SubagentStarted(child *pipeline.Agent, inject func(pipeline.ContextMessage))
	SubagentEnded(child *pipeline.Agent)
}

// RuntimeContext is the runtime-context message an agent's model sees next.
type RuntimeContext struct {
	// Text is the whole message text.
	Text string
	// Sections are its sections in order.
	Sections []ContextSection
}

// ContextSection is one named section of the runtime-context message.
type ContextSection struct {
	// Name is e.g. "sandbox:policy".
	Name string `json:"name"`
	// Text is the section text.
	Text string `json:"text"`
}

// NewRuntimeContext is the message of text, with secs' non-empty sections.
func NewRuntimeContext(text string, secs []policy.Section) RuntimeContext {
	rc := RuntimeContext{Text: text}
	for _, s := range secs {
		if s.Text != "" {
			rc.Sections = append(rc.Sections, ContextSection{Name: s.Name, Text: s.Text})
		}
	}
	return rc
}
