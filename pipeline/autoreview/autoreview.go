package autoreview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/session"
)

// AskReason is the reason of the ask a reviewed call becomes; it is audited
// in approval/asked.
const AskReason = "auto review: a reviewer rates this call before it runs"

// DefaultTimeout bounds one review when [Config.Timeout] is zero.
const DefaultTimeout = 60 * time.Second

// Outcomes of one review, as auto-review/decided records them.
const (
	// Approved: the call runs with full access.
	Approved = "approved"
	// Rejected: the user is asked.
	Rejected = "rejected"
	// Failed: the reviewer returned an error or panicked; the call is refused.
	Failed = "error"
	// TimedOut: the reviewer did not answer in time; the call is refused.
	TimedOut = "timeout"
)

// Subject is what the reviewer rates: one call before it runs.
type Subject struct {
	// Agent is the calling agent's id.
	Agent string
	// Tool is the tool name.
	Tool string
	// CallID is the model's call id.
	CallID string
	// Args is a copy of the call's frozen arguments.
	Args json.RawMessage
	// Reason is the ask reason of the policy that asked, or [AskReason]
	// when every policy allowed the call.
	Reason string
}

// Verdict is the reviewer's answer.
type Verdict struct {
	// Approve lets the call run with full access; false asks the user.
	Approve bool
	// Risk is the reviewer's rating (low, medium, high).
	Risk string
	// Rationale is one sentence the user sees when the call is rejected.
	Rationale string
}

// Reviewer rates one call. A model client implements it (see
// [ModelReviewer]); an error fails closed: the call is refused.
type Reviewer interface {
	Review(ctx context.Context, s Subject) (Verdict, error)
}

// ReviewerFunc adapts a function to [Reviewer].
type ReviewerFunc func(ctx context.Context, s Subject) (Verdict, error)

// Review calls f.
func (f ReviewerFunc) Review(ctx context.Context, s Subject) (Verdict, error) { return f(ctx, s) }

// Config is the switch and its settings.
type Config struct {
	// Enabled switches Auto review on; the zero Config is off.
	Enabled bool
	// Name names the reviewer in the audit (e.g. the model, or "constructed
	// reviewer" in a simulation).
	Name string
	// Timeout bounds one review (0: [DefaultTimeout]).
	Timeout time.Duration
	// Tools lists the reviewed tools; nil reviews every tool.
	Tools []string
}

// Gate is Auto review for one composition: [Gate.Install] hooks it into the
// pipeline and the approval service, [Gate.FullAccess] tells the composition
// which calls the reviewer approved.
type Gate struct {
	cfg   Config
	rev   Reviewer
	tools map[string]bool

	mu      sync.Mutex
	granted map[*pipeline.Call]bool
}

// New validates cfg. An enabled gate needs a reviewer and a name; a negative
// timeout is an error.
func New(cfg Config, r Reviewer) (*Gate, error) {
	var errs []error
	if cfg.Enabled && r == nil {
		errs = append(errs, errors.New("autoreview: enabled without a reviewer"))
	}
	if cfg.Enabled && cfg.Name == "" {
		errs = append(errs, errors.New("autoreview: the reviewer needs a name for the audit"))
	}
	if cfg.Timeout < 0 {
		errs = append(errs, fmt.Errorf("autoreview: timeout must be >= 0, got %v", cfg.Timeout))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	g := &Gate{cfg: cfg, rev: r, granted: map[*pipeline.Call]bool{}}
	if cfg.Tools != nil {
		g.tools = map[string]bool{}
		for _, t := range cfg.Tools {
			g.tools[t] = true
		}
	}
	return g, nil
}

// Enabled reports whether the switch is on.
func (g *Gate) Enabled() bool { return g.cfg.Enabled }

func (g *Gate) reviews(tool string) bool { return g.tools == nil || g.tools[tool] }

// Install registers the gate through reg and answers (both for the same
// scope, or both global): a prepended pre-execute listener, a prepended
// answerer and a result observer that drops the call's grant. With the
// switch off it registers nothing. The returned function removes all three;
// ending the scope does too.
func (g *Gate) Install(reg pipeline.Scoped, answers approval.Scoped) (remove func(), err error) {
	if !g.cfg.Enabled {
		return func() {}, nil
	}
	var removers []func()
	remove = func() {
		for i := len(removers) - 1; i >= 0; i-- {
			removers[i]()
		}
	}
	for _, r := range []func() (func(), error){
		func() (func(), error) { return reg.PrependPreExecute(g.pre) },
		func() (func(), error) { return answers.PrependAnswer(g.answer) },
		func() (func(), error) { return reg.OnResult(g.forget) },
	} {
		rm, err := r()
		if err != nil {
			remove()
			return nil, fmt.Errorf("autoreview: install: %w", err)
		}
		removers = append(removers, rm)
	}
	return remove, nil
}

// FullAccess reports whether the reviewer approved call: the composition
// then runs it with full access (danger-full-access), for this call only.
func (g *Gate) FullAccess(call *pipeline.Call) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.granted[call]
}

func (g *Gate) forget(call *pipeline.Call, _ pipeline.Result) {
	g.mu.Lock()
	delete(g.granted, call)
	g.mu.Unlock()
}

// pre turns a call every inner listener allowed into an ask.
func (g *Gate) pre(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
	d, err := next()
	if err != nil || d.Kind != pipeline.KindAllow || d.Args != nil || !g.reviews(call.Name()) {
		return d, err
	}
	return pipeline.Ask(AskReason), nil
}

// --8<-- [start:answer]
// answer reviews the pipeline's asks for reviewed tools ahead of the human.
func (g *Gate) answer(ctx context.Context, req *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
	call := req.Call
	if call == nil || call.Agent() != req.Agent || call.Name() != req.ToolName || !g.reviews(req.ToolName) {
		return next()
	}
	s := Subject{Tool: call.Name(), CallID: call.CallID(), Args: call.Args(), Reason: req.Reason}
	if call.Agent() != nil {
		s.Agent = call.Agent().ID
	}
	v, outcome, rerr := g.review(ctx, s)
	rec := record{CallID: call.CallID(), ToolName: call.Name(), Reviewer: g.cfg.Name, Outcome: outcome, Risk: v.Risk, Rationale: v.Rationale}
	if rerr != nil {
		rec.Error = rerr.Error()
	}
	if outcome == Approved {
		g.mu.Lock()
		g.granted[call] = true
		g.mu.Unlock()
	}
	if err := g.audit(req.Agent, rec); err != nil {
		g.forget(call, pipeline.Result{})
		return pipeline.Unavailable, nil
	}
	switch outcome {
	case Approved:
		return pipeline.AllowedOnce, nil
	case Rejected:
		req.DisplayReason = &pipeline.DisplayReason{
			En: fmt.Sprintf("The auto reviewer rejected this call (risk %s): %s Allow it once, under the standing sandbox?", v.Risk, v.Rationale),
			Zh: fmt.Sprintf("自动审查拒绝了这次调用（风险 %s）：%s 是否在当前沙箱下允许一次？", v.Risk, v.Rationale),
		}
		return next()
	}
	return pipeline.Unavailable, nil
}

// --8<-- [end:answer]

// review runs the reviewer under the timeout; a panic is an error, a late
// verdict is discarded.
func (g *Gate) review(ctx context.Context, s Subject) (Verdict, string, error) {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	type answer struct {
		v   Verdict
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		defer func() {
			if p := recover(); p != nil {
				a = answer{err: fmt.Errorf("reviewer panicked: %v", p)}
			}
			done <- a
		}()
		a.v, a.err = g.rev.Review(rctx, s)
	}()
	var a answer
	select {
	case a = <-done:
	case <-rctx.Done():
	}
	switch {
	case ctx.Err() != nil:
		return Verdict{}, Failed, fmt.Errorf("the call was cancelled during the review: %w", ctx.Err())
	case rctx.Err() != nil:
		// No verdict, or one that came at or after the deadline: fail closed.
		return Verdict{}, TimedOut, fmt.Errorf("no verdict within %v", g.cfg.Timeout)
	case a.err != nil:
		return Verdict{}, Failed, a.err
	case a.v.Approve:
		return a.v, Approved, nil
	}
	return a.v, Rejected, nil
}

// record is the data of auto-review/decided.
type record struct {
	CallID    string `json:"callId"`
	ToolName  string `json:"toolName"`
	Reviewer  string `json:"reviewer"`
	Outcome   string `json:"outcome"`
	Risk      string `json:"risk,omitempty"`
	Rationale string `json:"rationale,omitempty"`
	Error     string `json:"error,omitempty"`
}

func (g *Gate) audit(a *pipeline.Agent, rec record) error {
	if a == nil || a.Session == nil {
		return errors.New("autoreview: the agent has no session log to audit in")
	}
	_, err := a.Session.Append(session.KindAutoReviewDecided, rec)
	return err
}
