package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrArgsFrozen is returned (as the call's final error) when a stage tries to
// run arguments other than the ones the log recorded.
var ErrArgsFrozen = errors.New("tool call arguments are frozen once logged: a pre-execute listener returned different arguments; the call was not run")

// hooks is the hook lists a call runs with (snapshotted at its start).
type hooks struct {
	pre       []hook[PreExecute]
	guards    []hook[Guard]
	wrappers  []hook[Wrapper]
	post      []hook[PostExecute]
	observers []hook[ResultObserver]
	approver  Approver
	chain     []*Scope // per call: the calling agent's scope chain, nearest first
}

// Execute runs one call through every stage and returns its one final result;
// every path ends in exactly one result notification. It never panics: a
// panicking stage becomes an error result and never lets the call through.
//
// Stage order: argument check → pre-execute waterfall → approval (ask) →
// guards (allow only) → execute wrappers around the tool body → post-execute →
// result observers. Denials, cancel and approval outcomes still pass through
// post-execute; stage errors (final errors) skip it.
func (r *Registry) Execute(call *Call) Result { return r.ExecuteStaged(call, Stages{}) }

// Stages are optional callbacks a caller that schedules calls (run_code's
// nested calls) gets from inside [Registry.ExecuteStaged]. Each runs exactly
// once per call, whatever the outcome; Prepared and Commit on the calling
// goroutine.
type Stages struct {
	// Prepared runs when the prepare stages are over: after pre-execute,
	// approval and guards decided (or a stage error, a denial or the argument
	// check ended the call), before the body runs. A scheduler starts the next
	// call from here, so prepare stages of its calls never overlap.
	Prepared func()
	// Commit runs after the body and before post-execute (or before the
	// result notification of a call that skips post-execute). It may block:
	// a scheduler holds a call here until its turn to commit.
	Commit func()
	// Dispatched runs once the call's fate at its body is sealed: the body
	// runner read the signal (the body runs, or the call is "aborted before
	// dispatch"), or the call ended without reaching it. A signal aborted
	// after Dispatched cannot make the call "aborted before dispatch". It may
	// run on a wrapper's goroutine.
	Dispatched func()
}

// bodyGate is a call's passage to its body. The body runner may still run
// in a wrapper's goroutine after the wrapper returned (timeout): hence
// atomic.
type bodyGate struct {
	invoked    atomic.Bool // the body ran
	passed     atomic.Bool // dispatched ran
	dispatched func()
}

// pass runs the Dispatched callback the first time only.
func (g *bodyGate) pass() {
	if g.passed.CompareAndSwap(false, true) && g.dispatched != nil {
		g.dispatched()
	}
}

func (s Stages) prepared(done *bool) {
	if !*done && s.Prepared != nil {
		s.Prepared()
	}
	*done = true
}

// ExecuteStaged is [Registry.Execute] with the scheduling callbacks of s.
func (r *Registry) ExecuteStaged(call *Call, s Stages) Result {
	if call == nil || call.signal == nil {
		s.prepared(new(bool))
		if s.Commit != nil {
			s.Commit()
		}
		return ErrorResult(errors.New("pipeline: a call must be made with NewCall or NewSubCall; the call was not run"))
	}
	chain := call.agent.Scope().Chain()
	r.mu.RLock()
	h := hooks{
		pre:       admitted(r.pre, chain),
		guards:    guardOrder(r.guards, chain),
		wrappers:  admitted(r.wrappers, chain),
		post:      admitted(r.post, chain),
		observers: admitted(r.observers, chain),
		approver:  r.approver,
		chain:     chain,
	}
	r.mu.RUnlock()
	gate := &bodyGate{dispatched: s.Dispatched}
	var res Result
	var final bool
	prepared := false
	switch ended := endedIn(chain); {
	case !call.executed.CompareAndSwap(false, true):
		res, final = ErrorResult(fmt.Errorf("tool call %q was already executed: a call runs once (make a new call)", call.callID)), true
	case ended != nil:
		res, final = ErrorResult(fmt.Errorf("agent %q cannot call tools: %s has ended and its registrations were removed; the call was not run", call.agent.ID, ended)), true
	default:
		res, final = r.prepare(call, &h, gate, func() { s.prepared(&prepared) })
	}
	s.prepared(&prepared)
	gate.pass()
	if s.Commit != nil {
		s.Commit()
	}
	if !final {
		res = r.postExecute(call, &h, res, gate.invoked.Load())
	}
	r.notify(call, &h, res)
	return res
}

// prepare runs everything before post-execute. final reports that the result
// must skip post-execute.
func (r *Registry) prepare(call *Call, h *hooks, gate *bodyGate, prepared func()) (res Result, final bool) {
	if !LosslessArgs(call.args) {
		return ErrorResult(errors.New(MsgArgsNotLossless)), true
	}
	if call.signal.Err() != nil {
		return ErrorResult(ErrAbortedBeforeDispatch), true
	}
	v := r.decide(call, h)
	prepared()
	switch {
	case v.err != nil:
		return ErrorResult(v.err), true
	case v.cancelled:
		return ErrorResult(ErrAbortedBeforeDispatch), false
	case v.denied:
		return denialResult(v.reason, v.info), false
	}
	if call.signal.Err() != nil {
		return ErrorResult(ErrAbortedBeforeDispatch), false
	}
	res, err := r.dispatch(call, h, gate)
	if err != nil {
		return ErrorResult(err), true
	}
	return res, false
}

// --8<-- [start:decide]
// verdict is what the stages before the body decided: a stage failure (the
// call ends with err and skips post-execute), a cancel, a denial with its
// reason and info, or none of them (run the body).
type verdict struct {
	err       error
	cancelled bool
	denied    bool
	reason    string
	info      *ErrorInfo
}

// decide runs pre-execute, approval and guards.
func (r *Registry) decide(call *Call, h *hooks) verdict {
	d, err := r.runPre(call, h.pre)
	if err != nil {
		return verdict{err: err}
	}
	switch d.Kind {
	case KindAllow, KindDeny, KindCancel, KindAsk:
	default:
		return verdict{err: fmt.Errorf("tools/pre-execute returned an unknown decision kind %q; only allow, deny, cancel and ask exist", string(d.Kind))}
	}
	if d.Args != nil && !bytes.Equal(d.Args, call.args) {
		return verdict{err: ErrArgsFrozen}
	}
	if d.Kind == KindAsk {
		var outcome ApprovalOutcome
		d, outcome, err = r.approve(call, h.approver, d)
		if err != nil {
			return verdict{err: err}
		}
		if outcome == Cancelled && call.signal.Err() != nil {
			return verdict{cancelled: true}
		}
	}
	switch d.Kind {
	case KindCancel:
		return verdict{cancelled: true}
	case KindDeny:
		return verdict{denied: true, reason: d.Reason, info: d.Info}
	}
	reason, denied, err := r.runGuards(call, h.guards)
	return verdict{err: err, denied: denied, reason: reason}
}

// --8<-- [end:decide]

// runPre runs the pre-execute waterfall with terminal default allow.
func (r *Registry) runPre(call *Call, list []hook[PreExecute]) (Decision, error) {
	return waterfall("tools/pre-execute", len(list), Allow(), func(i int, next func() (Decision, error)) (Decision, error) {
		return list[i].fn(call.signal, call, next)
	})
}

// waterfall runs links 0..n-1, each given next (the rest of the chain); past
// the last link next returns terminal. A link that panics fails the chain
// with the panic as an error of stage.
func waterfall[D any](stage string, n int, terminal D, link func(i int, next func() (D, error)) (D, error)) (D, error) {
	var step func(i int) (D, error)
	step = func(i int) (d D, err error) {
		if i == n {
			return terminal, nil
		}
		err = contain(stage, func() (err error) {
			d, err = link(i, func() (D, error) { return step(i + 1) })
			return err
		})
		return d, err
	}
	return step(0)
}

// contain runs one stage's callback f and returns its error; a panic in f
// becomes the error instead ([panicError] of stage), and whatever f had not
// assigned when it panicked stays unassigned. It is the one recovery of the
// pipeline's stages: each caller decides what a failure means for the call
// (every stage before the body fails closed: the call is refused).
func contain(stage string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(stage, v)
		}
	}()
	return f()
}

// approve turns an ask into allow or deny through the approval service.
func (r *Registry) approve(call *Call, a Approver, ask Decision) (d Decision, outcome ApprovalOutcome, err error) {
	name := call.name
	if a == nil {
		if ask.Reason != "" {
			return Deny(ask.Reason), "", nil
		}
		return Deny(fmt.Sprintf("tool %q requires approval (not yet supported)", name)), "", nil
	}
	if call.agent == nil {
		return Deny(fmt.Sprintf("tool %q requires approval, but the call has no agent to route it through", name)), "", nil
	}
	err = contain("approval", func() (err error) {
		outcome, err = a.Request(call.signal, ApprovalRequest{Agent: call.agent, ToolName: name, CallID: call.callID, Reason: ask.Reason, DisplayReason: ask.DisplayReason, Call: call})
		return err
	})
	if err != nil {
		return Decision{}, "", err
	}
	switch outcome {
	case AllowedOnce:
		return Allow(), outcome, nil
	case Rejected:
		return Deny(fmt.Sprintf("the user rejected tool %q", name)), outcome, nil
	case Cancelled:
		return Deny(fmt.Sprintf("approval for tool %q was cancelled", name)), outcome, nil
	case Unavailable:
		return Deny(fmt.Sprintf("tool %q requires approval, but no approval channel is available", name)), outcome, nil
	}
	return Decision{}, "", unreachable("ApprovalOutcome", string(outcome))
}

// runGuards evaluates guards in order; the first denial wins.
func (r *Registry) runGuards(call *Call, list []hook[Guard]) (reason string, denied bool, err error) {
	for _, g := range list {
		err = contain("guard", func() error {
			reason, denied = g.fn(call.signal, call)
			return nil
		})
		if err != nil {
			return "", false, err
		}
		if denied {
			return reason, true, nil
		}
	}
	return "", false, nil
}

// dispatch runs the execute wrappers around the body runner.
func (r *Registry) dispatch(call *Call, h *hooks, gate *bodyGate) (Result, error) {
	dctx := call.signal
	list := h.wrappers
	var step func(i int, ctx context.Context) (Result, error)
	step = func(i int, ctx context.Context) (res Result, err error) {
		if i == len(list) {
			return r.runBody(ctx, call, h, gate), nil
		}
		if ctx == nil {
			ctx = dctx
		}
		err = contain("tools/execute", func() (err error) {
			res, err = list[i].fn(ctx, call, func(next context.Context) (Result, error) {
				if next == nil {
					next = ctx
				}
				return step(i+1, next)
			})
			return err
		})
		if err == nil {
			err = checkShape(res)
		}
		return res, err
	}
	res, err := step(0, dctx)
	if err != nil {
		return Result{}, err
	}
	if call.signal.Err() != nil && !res.IsError {
		res = cancelled(res, gate.invoked.Load())
	}
	return res, nil
}

// cancelled replaces a success after the caller cancelled: ABORTED when the
// body ran, else ABORTED_BEFORE_DISPATCH; the result's context messages are
// kept.
func cancelled(res Result, bodyInvoked bool) Result {
	messages := res.ContextMessages
	if bodyInvoked {
		res = ErrorResult(ErrAborted)
	} else {
		res = ErrorResult(ErrAbortedBeforeDispatch)
	}
	res.ContextMessages = messages
	return res
}

// checkShape rejects a wrapper-authored result that is neither a well-formed
// success nor a well-formed failure.
func checkShape(r Result) error {
	if r.IsError {
		if r.Error == nil || r.Value != nil || r.ConcludesTurn {
			return errors.New("tools/execute returned a malformed failure (a failure needs error and never has value or concludesTurn)")
		}
		return nil
	}
	if r.Error != nil {
		return errors.New("tools/execute returned a success that carries an error")
	}
	return nil
}

// runBody is the terminal of the execute waterfall.
func (r *Registry) runBody(ctx context.Context, call *Call, h *hooks, gate *bodyGate) (res Result) {
	// Fuse the caller's cancellation into the body's context unless ctx is
	// the caller's own context (a wrapper may have passed on anything,
	// including a context that ignores the caller's cancellation).
	if ctx != call.signal {
		fused, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(call.signal, func() { cancel(context.Cause(call.signal)) })
		defer func() { stop(); cancel(nil) }()
		ctx = fused
	}
	aborted := ctx.Err() != nil
	gate.pass()
	if aborted {
		return ErrorResult(ErrAbortedBeforeDispatch)
	}
	r.mu.RLock()
	e, ok := r.resolveLocked(call.name, h.chain)
	r.mu.RUnlock()
	if !ok {
		return ErrorResult(UnknownToolError(call.name))
	}
	gate.invoked.Store(true)
	var out Output
	err := contain("tool body", func() (err error) {
		if err = checkArgs(e.args, call.args, e.tool.ArgsRoot); err != nil {
			return err
		}
		out, err = e.tool.Run(ctx, call)
		return err
	})
	if err != nil {
		res = ErrorResult(err)
		var cc ContextCarrier
		if errors.As(err, &cc) {
			res.ContextMessages = cloneMessages(cc.ContextMessages())
		}
		return res
	}
	if out.Value != nil && !json.Valid(out.Value) {
		return ErrorResult(NewError("ToolOutputError", "INVALID_TOOL_OUTPUT", fmt.Sprintf("tool %q returned invalid output: value is not lossless JSON", call.name)))
	}
	if out.Meta != nil && !json.Valid(out.Meta) {
		return ErrorResult(NewError("ToolOutputError", "INVALID_TOOL_OUTPUT", fmt.Sprintf("tool %q returned invalid output: output.presentationMeta failed: meta is not lossless JSON", call.name)))
	}
	res = Result{Value: out.Value, Content: out.Content, Sandbox: out.Sandbox, ConcludesTurn: out.ConcludesTurn}
	res.ContextMessages = cloneMessages(out.ContextMessages)
	if res.Content == nil {
		res.Content = []Block{}
	}
	if call.parent == nil {
		res.Meta = out.Meta
	}
	if ctx.Err() != nil {
		return ErrorResult(ErrAborted)
	}
	return res
}

// postExecute runs the post-execute waterfall (terminal: accept unchanged).
// Its own errors become the final result (finalisation still follows).
func (r *Registry) postExecute(call *Call, h *hooks, res Result, invoked bool) Result {
	list := h.post
	if len(list) == 0 {
		if call.signal.Err() != nil && !res.IsError {
			return cancelled(res, invoked)
		}
		return res
	}
	d, err := waterfall("tools/post-execute", len(list), Accept(), func(i int, next func() (PostDecision, error)) (PostDecision, error) {
		return list[i].fn(call.signal, call, res.Clone(), next)
	})
	if err != nil {
		return ErrorResult(err)
	}
	switch d.Kind {
	case PostAccept:
		if d.Content != nil {
			res.Content = append([]Block(nil), d.Content...)
		}
		if len(d.ContextMessages) > 0 {
			res.ContextMessages = append(cloneMessages(res.ContextMessages), cloneMessages(d.ContextMessages)...)
		}
	case PostBlock:
		fb := append([]Block(nil), d.Feedback...)
		if fb == nil {
			fb = []Block{}
		}
		res = Result{IsError: true, Content: fb, Error: &ResultError{Message: blockMessage(d.Feedback)}}
		res.ContextMessages = cloneMessages(d.ContextMessages)
	default:
		return ErrorResult(fmt.Errorf("tools/post-execute returned an unknown decision kind %q; only accept and block exist", string(d.Kind)))
	}
	if call.signal.Err() != nil && !res.IsError {
		res = cancelled(res, invoked)
	}
	return res
}

// notify emits the one tools/result notification of a call.
func (r *Registry) notify(call *Call, h *hooks, res Result) {
	for _, o := range h.observers {
		err := contain("tools/result", func() error {
			o.fn(call, res.Clone())
			return nil
		})
		if err != nil {
			r.logf("tool %q (%s): tools/result observer failed: %v", call.name, call.callID, ErrorMessage(err))
		}
	}
}
