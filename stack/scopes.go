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

// preset is the agent preset's name ([DefaultAgentPreset] when unset).
func (s *Stack) preset() string {
	if s.cfg.AgentPreset == "" {
		return DefaultAgentPreset
	}
	return s.cfg.AgentPreset
}

// scopeAgent binds the session's agent under the agent preset's standing
// scope (as upstream's roster mounts an agent) and switches Auto review on
// for it when configured.
func (s *Stack) scopeAgent(agent *pipeline.Agent) error {
	s.standing = pipeline.NewScope("agentPreset:" + s.preset())
	s.agent = agent
	if _, err := agent.Scope().Bind(s.standing); err != nil {
		return fmt.Errorf("stack: bind the agent under its preset: %w", err)
	}
	var err error
	if s.review, err = autoreview.New(s.cfg.AutoReview, s.cfg.Reviewer); err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	if _, err := s.review.Install(s.reg.In(agent.Scope()), s.approver.In(agent.Scope())); err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	return nil
}

// policyFor is the standing sandbox policy of one call, as the bash and file
// tools resolve it: the session's mode, or danger-full-access for this one
// call when the auto reviewer approved it (the nearest upstream meaning of
// "full access": an approved escalation that lasts one call).
func (s *Stack) policyFor(call *pipeline.Call) (sandbox.Policy, error) {
	var approved sandbox.Mode
	if s.review.FullAccess(call) {
		approved = sandbox.DangerFullAccess
	}
	p, err := s.resolver.Resolve(call.Agent(), approved)
	if err != nil {
		return p, err
	}
	p.Limits = s.cfg.Limits
	return p, nil
}

// Standing returns the agent preset's standing scope: registrations made
// through it apply to the session's agent and to every child it delegates.
func (s *Stack) Standing() *pipeline.Scope { return s.standing }

// In returns the registration surface of scope (nil: global) in the stack's
// pipeline: s.In(s.Agent().Scope()) is the session agent's own (upstream's
// agent.ctx), which its delegated children do not inherit.
func (s *Stack) In(scope *pipeline.Scope) pipeline.Scoped { return s.reg.In(scope) }

// Answers returns the approval answerer surface of scope (nil: global).
func (s *Stack) Answers(scope *pipeline.Scope) approval.Scoped { return s.approver.In(scope) }
