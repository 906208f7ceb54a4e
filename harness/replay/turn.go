package replay

import (
	"context"
	"errors"
	"slices"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// promptMessage is a prompt's user message (source user) of content.
func promptMessage(content []pipeline.Block) userMessage {
	return userMessage{Content: content, Source: kindOnly{"user"}, Role: "user", ID: newUUID(), kind: "user"}
}

// openedTurn is a turn that started: its number, what its first step's
// claim took, and its context (cancelled by an abort).
type openedTurn struct {
	turn    int
	claimed []userMessage
	ctx     context.Context
	cancel  context.CancelCauseFunc
}

// openTurn starts a turn: turn/start, then its first step's claim (the
// whole next-step list, then one queued prompt).
func (d *driver) openTurn() (*openedTurn, error) {
	ctx, cancel := context.WithCancelCause(d.base)
	d.mu.Lock()
	d.turnNo++
	t := &openedTurn{turn: d.turnNo, ctx: ctx, cancel: cancel}
	d.turnCancel = cancel
	d.woken = false
	d.mu.Unlock()
	if _, err := d.append("turn/start", turnData{t.turn}); err != nil {
		cancel(nil)
		return nil, err
	}
	claimed, err := d.claim(nextTurn, t.turn)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	t.claimed = claimed
	return t, nil
}

// claim takes a step's input from the inbox (target: next-turn on a turn's
// first step) and tells the bridge which turn claimed a prompt.
func (d *driver) claim(target string, turn int) ([]userMessage, error) {
	claimed, err := d.inbox.claim(target)
	if err != nil {
		return nil, err
	}
	d.wire.claimed(claimed, turn)
	return claimed, nil
}

// stepDecision is a pre-step's outcome: reject (the turn ends blocked
// before the step) or enter these messages.
type stepDecision struct {
	reject   bool
	messages []userMessage
}

// preStepInfo is what a pre-step listener is told: the turn, the step about
// to start and the messages its claim took from the inbox.
type preStepInfo struct {
	turn, step int
	claimed    []userMessage
}

// preStepListener is one agent/pre-step waterfall listener: it may act
// before and after next (the inner listeners), reject, or change the
// messages entered.
type preStepListener func(ctx context.Context, ps *preStepInfo, next func() (stepDecision, error)) (stepDecision, error)

// turn runs one opened turn as upstream's loop does: per step the pre-step
// (the claim, then the listeners; the first step's claim was the turn's
// opening) and either a rejection (turn blocked), a failure of a pre-step
// listener (turn failed, no step), nothing to do (a first step with
// nothing claimed ends the turn completed; a later one ends it) or
// step/start, the entered messages, the model call and its tools,
// step/end; when a step ended the turn (completed, max-tokens: sticky for
// the turn) and nothing waits for the next step, the turn-stopping
// listeners (Stop hooks) may queue steering; if still nothing waits the
// turn ends. more reports input left for another turn, unless the turn was
// blocked, found nothing to do, failed or was aborted. A held child
// (holdUntilYield) enters its first step once released.
func (d *driver) turn(t *openedTurn) (more bool, err error) {
	ctx, turn := t.ctx, t.turn
	defer t.cancel(nil)
	d.waitUntil(ctx, func() bool { return d.held == 0 })
	var ends map[string]any
	claimed, first := t.claimed, true
	for step := 1; ; step++ {
		if ctx.Err() != nil {
			return false, d.endTurn(turn, abortReason(ctx))
		}
		if !first {
			if claimed, err = d.claim(nextStep, turn); err != nil {
				return false, err
			}
		}
		first = false
		dec, err := d.runPreStep(ctx, turn, step, claimed)
		var fail *stepFailure
		switch {
		case errors.As(err, &fail) && ctx.Err() != nil:
			return false, d.endTurn(turn, abortReason(ctx))
		case errors.As(err, &fail):
			return false, d.endTurn(turn, map[string]any{"kind": "error", "error": map[string]any{"message": fail.err.Error(), "code": "UNKNOWN"}})
		case err != nil:
			return false, err
		case dec.reject:
			return false, d.endTurn(turn, map[string]any{"kind": "blocked"})
		case ends != nil && len(dec.messages) == 0:
			return d.inbox.hasPending(), d.endTurn(turn, ends)
		case step == 1 && len(dec.messages) == 0:
			return false, d.endTurn(turn, map[string]any{"kind": "completed"})
		}
		stepEnd, failure, err := d.runStep(ctx, turn, step, dec.messages)
		if err != nil {
			return false, err
		}
		switch {
		case failure != nil:
			return false, d.endTurn(turn, map[string]any{"kind": "error", "error": failure})
		case ctx.Err() != nil:
			return false, d.endTurn(turn, abortReason(ctx)) // no claim: the next turn's start claims the inbox
		}
		if ends == nil || ends["kind"] != "max-tokens" {
			ends = stepEnd
		}
		if ends != nil && len(d.inbox.pending(nextStep)) == 0 {
			if err := d.turnStopping(ctx); err != nil {
				return false, err
			}
		}
		if ends != nil && len(d.inbox.pending(nextStep)) == 0 {
			return d.inbox.hasPending(), d.endTurn(turn, ends)
		}
	}
}

// stepFailure is a pre-step listener's failure that fails the turn (a
// checkpoint that could not be written): the turn ends with reason error
// {message: <the error>, code: UNKNOWN}, as upstream's loop ends a turn on
// a non-model throw.
type stepFailure struct{ err error }

func (f *stepFailure) Error() string { return f.err.Error() }

// runPreStep runs the pre-step listeners around the default decision for
// the step's claimed input: enter the claimed messages, then the runtime
// context when its text changed.
func (d *driver) runPreStep(ctx context.Context, turn, step int, claimed []userMessage) (stepDecision, error) {
	rc, err := d.surface.PendingContext(ctx)
	if err != nil {
		return stepDecision{}, err
	}
	ps := &preStepInfo{turn: turn, step: step, claimed: claimed}
	var link func(i int) (stepDecision, error)
	link = func(i int) (stepDecision, error) {
		if i == len(d.preStep) {
			msgs := slices.Clone(claimed)
			if rc != nil {
				msgs = append(msgs, userMessage{Content: rc.Content, Source: rc.Source, Role: rc.Role, ID: rc.ID, kind: "plugin"})
			}
			return stepDecision{messages: msgs}, nil
		}
		return d.preStep[i](ctx, ps, func() (stepDecision, error) { return link(i + 1) })
	}
	return link(0)
}

// runStep runs one step: step/start, the entered messages (then the
// session's fallback title after its first user message), the model call
// and its tools, step/end (always, also after a failure); stepEnd is the
// step's end (nil: tool calls continue the turn), failure the turn's
// failure, err a failure of the replay itself.
func (d *driver) runStep(ctx context.Context, turn, step int, messages []userMessage) (stepEnd map[string]any, failure map[string]any, err error) {
	if _, err := d.append("step/start", stepData{turn, step}); err != nil {
		return nil, nil, err
	}
	for _, m := range messages {
		e, err := d.appendWith("user/message", m, session.AppendOptions{SurfaceOp: "append"})
		if err != nil {
			return nil, nil, err
		}
		if m.kind == "user" {
			d.titles.userEntered(e.Seq, m.Content)
		}
	}
	if t := d.titles.fallback(); t != nil {
		if _, err := d.append("session/title", t); err != nil {
			return nil, nil, err
		}
	}
	stepEnd, failure, err = d.modelStep(ctx, turn, step)
	if _, aerr := d.append("step/end", stepData{turn, step}); err == nil {
		err = aerr
	}
	if d.instr != nil {
		d.instr.stepEnded()
	}
	return stepEnd, failure, err
}

// turnStopping runs the agent/turn-stopping listeners in order: each hook
// bridge's Stop hooks, whose block queues a steering message for the next
// step.
func (d *driver) turnStopping(ctx context.Context) error {
	for _, b := range d.stack.HookBridges() {
		steer, err := b.Stop(ctx, d.surface.Agent())
		if err != nil {
			return err
		}
		if steer != nil {
			if err := d.inbox.add(nextStep, pluginMessage(*steer)); err != nil {
				return err
			}
		}
	}
	return nil
}

// turnEndReason is turn/end's reason in upstream's key order.
type turnEndReason struct {
	Kind   string         `json:"kind"`
	Reason map[string]any `json:"reason,omitempty"`
	Error  any            `json:"error,omitempty"`
}

// endTurn writes turn/end with reason, records it, tells the bridge and
// the fixture, and logs the model-made title that was due after this turn.
func (d *driver) endTurn(turn int, reason map[string]any) error {
	r := turnEndReason{}
	r.Kind, _ = reason["kind"].(string)
	r.Reason, _ = reason["reason"].(map[string]any)
	if e, ok := reason["error"]; ok {
		r.Error = ordered(e)
	}
	_, err := d.append("turn/end", turnEndData{Turn: turn, Reason: r})
	d.mu.Lock()
	d.ended[turn] = reason
	d.cond.Broadcast()
	d.mu.Unlock()
	if err != nil {
		return err
	}
	d.wire.turnEnded(turn, reason)
	if d.hooks.turnEnded != nil {
		d.hooks.turnEnded(d, turn)
	}
	if t := d.titles.landed(); t != nil {
		if _, err := d.append("session/title", t); err != nil {
			return err
		}
	}
	d.mu.Lock()
	d.titleDone = d.titles.titled && d.titles.pending == nil
	d.mu.Unlock()
	return nil
}
