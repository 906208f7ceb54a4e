package stack

import (
	"context"
	"fmt"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/spill"
)

// compose builds the stack, each piece from the ones before it, in this
// order: the policy resolver, the approval service and its answerer, the
// pipeline registry and escalation, the session's agent under its preset
// (with Auto review), the spill policy; then the tools, in the order
// [Stack.Definitions] lists them (addTools); last, spill's listener, the
// outermost. A failure releases what was composed so far.
func compose(cfg Config, agent *pipeline.Agent) (*Stack, error) {
	s := &Stack{cfg: cfg, log: cfg.Log}
	var err error
	ap := approval.Policy(cfg.Approval)
	if s.resolver, err = policy.NewResolver(policy.Config{DefaultMode: cfg.Mode, Root: cfg.Workspace, Approval: ap}); err != nil {
		return nil, fmt.Errorf("stack: policy resolver: %w", err)
	}
	if s.approver, err = approval.New(approval.WithPolicy(ap)); err != nil {
		return nil, fmt.Errorf("stack: approval service: %w", err)
	}
	if cfg.Answer != nil {
		answer := cfg.Answer
		s.approver.Answer(func(ctx context.Context, req *pipeline.ApprovalRequest, _ func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			return answer(ctx, *req)
		})
	}
	s.reg = pipeline.NewRegistry()
	s.reg.SetApprover(s.approver)
	s.escalate = escalation.New(s.approver)
	if err := s.scopeAgent(agent); err != nil {
		return nil, err
	}
	if cfg.SpillMaxInlineBytes > 0 {
		store, err := spill.NewStore(cfg.SpillRoot)
		if err != nil {
			return nil, fmt.Errorf("stack: spill store: %w", err)
		}
		s.spillStore = store
		if s.spill, err = spill.New(spill.ByteConfig(cfg.SpillMaxInlineBytes), store, s.warn); err != nil {
			return nil, fmt.Errorf("stack: spill policy: %w", err)
		}
	}
	if err := s.addTools(); err != nil {
		s.Close()
		return nil, err
	}
	if s.spill != nil {
		// Outermost post-execute listener: it bounds whatever the inner ones produced.
		s.spill.Hook(s.reg)
	}
	return s, nil
}

// addTools registers the model-facing tools and the listeners around them,
// one area at a time, in registration order: bash and the job tools (the
// sandbox confiner comes from here), run_code confined by that confiner,
// the file tools, the repeated-call reminder, the hook bridges (their
// listeners inside the ones already registered, so the reminder's message
// comes before theirs), session query, then the tools beyond the safety
// stack (addExtras).
func (s *Stack) addTools() error {
	confiner, err := s.addBash()
	if err != nil {
		return err
	}
	if err := s.addCode(confiner); err != nil {
		return err
	}
	if err := s.addFS(); err != nil {
		return err
	}
	if err := s.addReminder(); err != nil {
		return err
	}
	if err := s.addHooks(); err != nil {
		return err
	}
	if err := s.addSessionQuery(); err != nil {
		return err
	}
	if err := s.addExtras(); err != nil {
		return err
	}
	return s.addSubagents()
}
