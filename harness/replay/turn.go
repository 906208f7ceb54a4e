package replay

import (
	"context"
	"slices"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// promptMessage is a prompt's user message (source user) of content.
func promptMessage(content []pipeline.Block) userMessage {
	return newUserMessage("user", kindOnly{"user"}, content)
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
	t := &openedTurn{turn: d.sched.begin(cancel), ctx: ctx, cancel: cancel}
	if _, err := d.append(session.KindTurnStart, session.TurnStart{Turn: t.turn}); err != nil {
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

// stepDecision is a pre-step's outcome: end the turn before the step
// (blocked: a listener refused it; failed: the emulated fixture's
// checkpoint, the outermost listener, could not be written) or enter these
// messages.
type stepDecision struct {
	end      *session.EndReason
	messages []userMessage
}

// rejected is the decision of a listener that refuses the step.
func rejected() stepDecision {
	return stepDecision{end: &session.EndReason{Kind: session.EndBlocked}}
}

// failedStep is the decision of the fixture's checkpoint that failed with
// err: the turn ends with reason error {message: <the error>, code:
// UNKNOWN}, as upstream's loop ends a turn on a non-model throw.
func failedStep(err error) stepDecision {
	return stepDecision{end: &session.EndReason{Kind: session.EndError, Error: &session.Failure{Message: err.Error(), Code: "UNKNOWN"}}}
}

// stands reports whether the decision ends the turn: the outer listeners
// leave it as it is.
func (dec stepDecision) stands() bool { return dec.end != nil }

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
// opening) and either its end (a rejection: turn blocked; a failure of the
// fixture's checkpoint: turn failed, no step), nothing to do (a first step
// with nothing claimed ends the turn completed; a later one ends it) or
// the step (runStep); when a step ended the turn (completed, max-tokens:
// sticky for the turn) and nothing waits for the next step, the
// turn-stopping listeners (Stop hooks) may queue steering; if still nothing
// waits the turn ends. more reports input left for another turn, unless the
// turn was blocked, found nothing to do, failed or was aborted. A held
// child (holdUntilYield) enters its first step once released.
func (d *driver) turn(t *openedTurn) (more bool, err error) {
	ctx, turn := t.ctx, t.turn
	defer t.cancel(nil)
	d.sched.waitUntil(ctx, func() bool { return d.sched.held == 0 })
	var ends *session.EndReason // how the steps so far end the turn (nil: they continue it)
	claimed := t.claimed
	for step := 1; ; step++ {
		if ctx.Err() != nil {
			return false, d.endTurn(turn, abortReason(ctx))
		}
		if step > 1 {
			if claimed, err = d.claim(nextStep, turn); err != nil {
				return false, err
			}
		}
		dec, err := d.runPreStep(ctx, turn, step, claimed)
		switch {
		case err != nil:
			return false, err
		case dec.stands() && dec.end.Failed() && ctx.Err() != nil:
			return false, d.endTurn(turn, abortReason(ctx))
		case dec.stands():
			return false, d.endTurn(turn, *dec.end)
		case ends != nil && len(dec.messages) == 0:
			return d.inbox.hasPending(), d.endTurn(turn, *ends)
		case step == 1 && len(dec.messages) == 0:
			return false, d.endTurn(turn, session.EndReason{Kind: session.EndCompleted})
		}
		stepEnd, err := d.runStep(ctx, turn, step, dec.messages)
		switch {
		case err != nil:
			return false, err
		case stepEnd != nil && stepEnd.Failed():
			return false, d.endTurn(turn, *stepEnd)
		case ctx.Err() != nil:
			return false, d.endTurn(turn, abortReason(ctx)) // no claim: the next turn's start claims the inbox
		}
		if h := d.hooks.stepEnded; h != nil {
			if err := h(d, turn, step); err != nil {
				return false, err
			}
		}
		if ends == nil || ends.Kind != session.EndMaxTokens {
			ends = stepEnd
		}
		if ends != nil && len(d.inbox.pending(nextStep)) == 0 {
			if err := d.turnStopping(ctx); err != nil {
				return false, err
			}
		}
		if ends != nil && len(d.inbox.pending(nextStep)) == 0 {
			return d.inbox.hasPending(), d.endTurn(turn, *ends)
		}
	}
}

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
				msgs = append(msgs, enteredMessage("plugin", rc.Source, rc.Content, rc.ID))
			}
			return stepDecision{messages: msgs}, nil
		}
		return d.preStep[i](ctx, ps, func() (stepDecision, error) { return link(i + 1) })
	}
	return link(0)
}

// runStep runs one step: step/start, the entered messages (then the
// session's fallback title after its first user message), the model call
// and its tools, step/end (always, also after a failure); stepEnd is how
// the step ends the turn (nil: tool calls continue it; failed: the model's
// call failed), err a failure of the replay itself.
func (d *driver) runStep(ctx context.Context, turn, step int, messages []userMessage) (stepEnd *session.EndReason, err error) {
	if _, err := d.append(session.KindStepStart, session.Step{Turn: turn, Step: step}); err != nil {
		return nil, err
	}
	for _, m := range messages {
		e, err := d.appendWith(session.KindUserMessage, m, session.AppendOptions{SurfaceOp: "append"})
		if err != nil {
			return nil, err
		}
		if m.kind == "user" {
			d.titles.userEntered(e.Seq, m.Content)
		}
	}
	if t := d.titles.fallback(); t != nil {
		if _, err := d.append(session.KindTitle, t); err != nil {
			return nil, err
		}
	}
	stepEnd, err = d.modelStep(ctx, turn, step)
	if _, aerr := d.append(session.KindStepEnd, session.Step{Turn: turn, Step: step}); err == nil {
		err = aerr
	}
	if d.instr != nil {
		d.instr.stepEnded()
	}
	return stepEnd, err
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

// endTurn writes turn/end with reason, records it, tells the bridge and
// the fixture, and logs the model-made title that was due after this turn.
func (d *driver) endTurn(turn int, reason session.EndReason) error {
	_, err := d.append(session.KindTurnEnd, session.TurnEnd{Turn: turn, Reason: reason})
	d.record.mu.Lock()
	d.record.ended[turn] = reason
	d.record.mu.Unlock()
	d.sched.wake()
	if err != nil {
		return err
	}
	d.wire.turnEnded(turn, reason)
	if d.hooks.turnEnded != nil {
		d.hooks.turnEnded(d, turn)
	}
	if t := d.titles.landed(); t != nil {
		if _, err := d.append(session.KindTitle, t); err != nil {
			return err
		}
	}
	d.record.mu.Lock()
	d.record.titled = d.titles.titled && d.titles.pending == nil
	d.record.mu.Unlock()
	return nil
}
