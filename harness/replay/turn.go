package replay

import (
	"context"
	"slices"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// promptMessage is a prompt's user message (source user) of content.
func promptMessage(content []pipeline.Block) userMessage {
	return userMessage{Content: content, Source: kindOnly{"user"}, Role: "user", ID: newUUID(), kind: "user"}
}

// runTurns runs turns until the agent is idle: after a turn ends, one that
// leaves input pending (a queued prompt, a notice that arrived late) opens
// the next at once, unless it was blocked, found nothing to do, failed or
// was aborted. started (if not nil) is closed once the first turn/start is
// in the log.
func (d *driver) runTurns(ctx context.Context, started chan struct{}) error {
	for {
		more, err := d.turn(ctx, started)
		started = nil
		if err != nil || !more {
			return err
		}
	}
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

// turn runs one turn as upstream's loop does: turn/start; per step the
// pre-step (the claim, then the listeners) and either a rejection (turn
// blocked), nothing to do (a first step with nothing claimed ends the turn
// completed; a later one ends it) or step/start, the entered messages, the
// model call and its tools, step/end; when a step ended the turn
// (completed, max-tokens: sticky for the turn) and nothing waits for the
// next step, the turn-stopping listeners (Stop hooks) may queue steering;
// if still nothing waits the turn ends. more reports input left for
// another turn.
func (d *driver) turn(ctx context.Context, started chan struct{}) (more bool, err error) {
	d.turnNo++
	turn := d.turnNo
	if _, err := d.append("turn/start", turnData{turn}); err != nil {
		return false, err
	}
	if started != nil {
		close(started)
	}
	var ends map[string]any
	target := nextTurn
	for step := 1; ; step++ {
		if ctx.Err() != nil {
			return false, d.endTurn(turn, abortReason(ctx))
		}
		dec, err := d.runPreStep(ctx, target, turn, step)
		if err != nil {
			return false, err
		}
		switch {
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
		target = nextStep
	}
}

// runPreStep claims the step's input and runs the pre-step listeners around
// the default decision: enter the claimed messages, then the runtime
// context when its text changed.
func (d *driver) runPreStep(ctx context.Context, target string, turn, step int) (stepDecision, error) {
	claimed, err := d.inbox.claim(target)
	if err != nil {
		return stepDecision{}, err
	}
	d.wire.claimed(claimed, turn)
	rc, err := d.stack.PendingContext(ctx)
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
		steer, err := b.Stop(ctx, d.stack.Agent())
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

// endTurn writes turn/end with reason, tells the bridge, and logs the
// model-made title that was due after this turn.
func (d *driver) endTurn(turn int, reason map[string]any) error {
	r := turnEndReason{}
	r.Kind, _ = reason["kind"].(string)
	r.Reason, _ = reason["reason"].(map[string]any)
	if e, ok := reason["error"]; ok {
		r.Error = ordered(e)
	}
	if _, err := d.append("turn/end", turnEndData{Turn: turn, Reason: r}); err != nil {
		return err
	}
	d.wire.turnEnded(turn, reason)
	if t := d.titles.landed(); t != nil {
		if _, err := d.append("session/title", t); err != nil {
			return err
		}
	}
	return nil
}
