package stack

import (
	"fmt"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/autoreview"
	"github.com/dshsim/dshsim/sandbox"
)

// DefaultAgentPreset names the standing scope when [Config.AgentPreset] is "".
const DefaultAgentPreset = "standard"

// scopeAgent binds the session's agent under the agent preset's standing
// scope (as upstream's roster mounts an agent) and switches Auto review on
// for it when configured.
func (p *parts) scopeAgent(agent *pipeline.Agent) error {
	preset := p.cfg.AgentPreset
	if preset == "" {
		preset = DefaultAgentPreset
	}
	p.standing = pipeline.NewScope("agentPreset:" + preset)
	p.root = agent
	if _, err := agent.Scope().Bind(p.standing); err != nil {
		return fmt.Errorf("stack: bind the agent under its preset: %w", err)
	}
	var err error
	if p.review, err = autoreview.New(p.cfg.AutoReview, p.cfg.Reviewer); err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	if _, err := p.review.Install(p.reg.In(agent.Scope()), p.approver.In(agent.Scope())); err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	return nil
}

// policyFor is the standing sandbox policy of one call, as the bash and file
// tools resolve it: the session's mode, or danger-full-access for this one
// call when the auto reviewer approved it (the nearest upstream meaning of
// "full access": an approved escalation that lasts one call).
func (p *parts) policyFor(call *pipeline.Call) (sandbox.Policy, error) {
	var approved sandbox.Mode
	if p.review.FullAccess(call) {
		approved = sandbox.DangerFullAccess
	}
	return p.resolver.Resolve(call.Agent(), approved)
}

// Standing returns the agent preset's standing scope: registrations made
// through it apply to the session's agent and to every child it delegates.
func (s *Stack) Standing() *pipeline.Scope { return s.impl.composition().standing }

// In returns the registration surface of scope (nil: global) in the stack's
// pipeline: s.In(s.Agent().Scope()) is the session agent's own (upstream's
// agent.ctx), which its delegated children do not inherit.
func (s *Stack) In(scope *pipeline.Scope) pipeline.Scoped {
	return s.impl.composition().reg.In(scope)
}

// Answers returns the approval answerer surface of scope (nil: global).
func (s *Stack) Answers(scope *pipeline.Scope) approval.Scoped {
	return s.impl.composition().approver.In(scope)
}
