package stack

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/autoreview"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/spill"
	"github.com/dshsim/dshsim/tools/code"
	"github.com/dshsim/dshsim/tools/jobs"
)

// parts is everything one composed stack holds.
type parts struct {
	cfg      Config
	log      *session.Log
	reg      *pipeline.Registry
	approver *approval.Service
	resolver *policy.Resolver
	escalate escalation.Func
	spill    *spill.Policy
	provider *sandbox.Provider
	jobs     *jobs.Registry   // the background jobs (bash.go)
	standing *pipeline.Scope  // the agent preset's standing scope
	root     *pipeline.Agent  // the session's agent, under standing
	review   *autoreview.Gate // Auto review (registers nothing when off)
	runCode  *code.Tool       // nil in native mode
	closers  []func() error

	mu       sync.Mutex
	warnings []string

	// hookLines are the hook configs' load-time reports (hooks.go).
	hookLines []string
}

func (p *parts) warn(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.warnings = append(p.warnings, msg)
}

// toolBuilders register the model-facing tools and the listeners around them
// (one file per area: bash.go, fs.go, hooks.go), in file order.
var toolBuilders []func(p *parts) error

func compose(cfg Config, agent *pipeline.Agent) (impl, error) {
	p := &parts{cfg: cfg, log: cfg.Log}
	var err error
	ap := approval.Policy(cfg.Approval)
	if p.resolver, err = policy.NewResolver(policy.Config{DefaultMode: cfg.Mode, Root: cfg.Workspace, Approval: ap}); err != nil {
		return nil, fmt.Errorf("stack: policy resolver: %w", err)
	}
	if p.approver, err = approval.New(approval.WithPolicy(ap)); err != nil {
		return nil, fmt.Errorf("stack: approval service: %w", err)
	}
	if cfg.Answer != nil {
		answer := cfg.Answer
		p.approver.Answer(func(ctx context.Context, req *pipeline.ApprovalRequest, _ func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			return answer(ctx, *req)
		})
	}
	p.reg = pipeline.NewRegistry()
	p.reg.SetApprover(p.approver)
	p.escalate = escalation.New(p.approver)
	if err := p.scopeAgent(agent); err != nil {
		return nil, err
	}

	if cfg.SpillMaxInlineBytes > 0 {
		store, err := spill.NewStore(cfg.SpillRoot)
		if err != nil {
			return nil, fmt.Errorf("stack: spill store: %w", err)
		}
		if p.spill, err = spill.New(spill.ByteConfig(cfg.SpillMaxInlineBytes), store, p.warn); err != nil {
			return nil, fmt.Errorf("stack: spill policy: %w", err)
		}
	}
	for _, b := range toolBuilders {
		if err := b(p); err != nil {
			p.close()
			return nil, err
		}
	}
	if p.spill != nil {
		// Outermost post-execute listener: it bounds whatever the inner ones produced.
		p.spill.Hook(p.reg)
	}
	return p, nil
}

func (p *parts) runtimeContext(ctx context.Context) (RuntimeContext, error) {
	return p.contextOf(p.log)
}

func (p *parts) syncContext(ctx context.Context) (*session.Event, error) {
	return p.resolver.SyncContext(p.log)
}

func (p *parts) execute(ctx context.Context, call *pipeline.Call) pipeline.Result {
	if res, collapsed := p.collapse(call); collapsed {
		return res
	}
	return p.reg.Execute(call)
}

func (p *parts) close() error {
	var errs []error
	for i := len(p.closers) - 1; i >= 0; i-- {
		errs = append(errs, p.closers[i]())
	}
	return errors.Join(errs...)
}

func (p *parts) tools() []pipeline.Tool { return p.reg.Tools() }

func (p *parts) backend() (string, sandbox.Enforcement) {
	if p.provider == nil {
		return "", ""
	}
	return p.provider.Selected()
}

func (p *parts) composition() *parts { return p }

func (p *parts) warningList() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.warnings...)
}
