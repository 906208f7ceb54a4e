package stack

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/code"
)

// Surface is what an agent loop drives for one agent: its log, the tools it
// is offered, one call through the pipeline, what its pre-step enters (the
// runtime context, the skill catalog), its pre-step contribution and its
// prompt sections. The session's agent (*Stack) and every delegated child
// (*Child) are one.
type Surface interface {
	// Agent is the agent the calls run for.
	Agent() *pipeline.Agent
	// Log is the agent's session log.
	Log() *session.Log
	// WireTools are the tools the model is offered, sorted by name.
	WireTools() []pipeline.Tool
	// Execute runs one call of the agent through the pipeline.
	Execute(ctx context.Context, callID, name string, args json.RawMessage) pipeline.Result
	// PendingContext is the runtime-context message a step would enter
	// (nil: unchanged since the last one logged).
	PendingContext(ctx context.Context) (*policy.SnapshotMessage, error)
	// PendingCatalog is the skill catalog message a step would enter (nil:
	// none, or unchanged).
	PendingCatalog(ctx context.Context) (*CatalogMessage, error)
	// UserMessageEntered tells the stack that a step entered a user's
	// message (the repeated-call reminder forgets the agent's run).
	UserMessageEntered()
	// PreStep runs the agent's pre-step contributions once a step is
	// entered, before its step/start (a one-shot child's descriptor, a
	// selected plan mode), and returns the messages the step enters after
	// the others (plan mode's user-switch notice).
	PreStep() ([]pipeline.ContextMessage, error)
	// PromptSections are the system-prompt sections the stack owns for
	// this agent (its tools' and its tools mode's).
	PromptSections() ([]PromptSection, error)
}

// Log returns the session log.
func (s *Stack) Log() *session.Log { return s.log }

// PreStep is the session agent's pre-step: a plan mode selected during
// the turn is appended as the step is entered, with its notice.
func (s *Stack) PreStep() ([]pipeline.ContextMessage, error) {
	if s.cfg.PlanMode == nil {
		return nil, nil
	}
	return s.cfg.PlanMode.Plan.OnBoundary(s.log)
}

// execute runs one call of agent: code mode collapses a direct call of any
// tool but run_code; a call that awaits I/O is a yield of the host (the job
// gate is pumped after it).
func (s *Stack) execute(ctx context.Context, agent *pipeline.Agent, callID, name string, args json.RawMessage) pipeline.Result {
	call := pipeline.NewCall(callID, name, args, agent, ctx)
	r, collapsed := s.collapse(call)
	if !collapsed {
		r = s.reg.Execute(call)
	}
	if g := s.cfg.Jobs.Gate; g != nil && s.Yields(name, args) {
		g.Pump()
	}
	return r
}

// wireTools is what agent is offered: every tool it sees (native), run_code
// alone (code), or both, sorted by name (upstream's order without a
// toolOrder).
func (s *Stack) wireTools(agent *pipeline.Agent) []pipeline.Tool {
	var out []pipeline.Tool
	for _, t := range s.reg.ToolsFor(agent) {
		if s.cfg.ToolsMode != ToolsCode || t.Name == code.Name {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b pipeline.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}
