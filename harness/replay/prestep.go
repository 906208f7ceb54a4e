package replay

import (
	"context"
	"fmt"
	"slices"

	"github.com/dshsim/dshsim/hooks"
	"github.com/dshsim/dshsim/pipeline"
)

// preStepListeners are the agent/pre-step listeners of the composition,
// outermost first: the emulated fixture's (when it has one), the
// workspace instructions (when on), the repeated-call reminder's reset,
// the between-step compaction (when the composition mounts one),
// each hook bridge's UserPromptSubmit (Claude Code outside Codex), the
// skill catalog (registered with the tools beyond the safety stack, after
// the hooks), then the agent's own pre-step contribution (a one-shot
// child's descriptor: upstream registers it in the child's scope, after
// every listener of the application). Every agent runs them, a child too:
// upstream's listeners are the application's, not the session's.
func (d *driver) preStepListeners() []preStepListener {
	var out []preStepListener
	if d.hooks.preStep != nil {
		out = append(out, d.fixturePreStep)
	}
	if d.instr != nil {
		out = append(out, d.instr.preStep)
	}
	out = append(out, d.resetRepeats, d.pressureCompaction)
	for _, b := range d.stack.HookBridges() {
		out = append(out, d.promptSubmit(b))
	}
	return append(out, d.skillCatalog, d.surfacePreStep)
}

// fixturePreStep is the emulated fixture's pre-step, the outermost
// listener: its failure fails the turn before any step (a checkpoint that
// could not be written).
func (d *driver) fixturePreStep(ctx context.Context, ps *preStepInfo, next func() (stepDecision, error)) (stepDecision, error) {
	if err := d.hooks.preStep(ctx, d, ps.turn, ps.step); err != nil {
		return failedStep(err), nil
	}
	return next()
}

// surfacePreStep runs the agent's own pre-step contribution once the step
// goes ahead (a one-shot child's descriptor, inside its first turn, as
// upstream's attachDescriptorAppend writes it after its next() returns
// "enter"; a plan mode selected during the turn): never for a step an
// outer listener rejected, so never for a child whose UserPromptSubmit
// hook blocked it, and after the events of the outer listeners that ran
// before it (the hooks'). Its messages (plan mode's user-switch notice)
// follow the inner decision's, as upstream's plan-mode listener appends
// its narration to the decision next() returned.
func (d *driver) surfacePreStep(ctx context.Context, ps *preStepInfo, next func() (stepDecision, error)) (stepDecision, error) {
	dec, err := next()
	if err != nil || dec.stands() {
		return dec, err
	}
	msgs, err := d.surface.PreStep()
	for _, m := range msgs {
		dec.messages = append(dec.messages, pluginMessage(m))
	}
	return dec, err
}

// skillCatalog enters the skill catalog after the inner decision's
// messages when the session's skills differ from the latest catalog logged
// (the first catalog, or an update); a rejection stands.
func (d *driver) skillCatalog(ctx context.Context, ps *preStepInfo, next func() (stepDecision, error)) (stepDecision, error) {
	dec, err := next()
	if err != nil || dec.stands() {
		return dec, err
	}
	m, err := d.surface.PendingCatalog(ctx)
	if err != nil {
		return dec, fmt.Errorf("skill catalog: %w", err)
	}
	if m != nil {
		dec.messages = append(dec.messages, enteredMessage("plugin", m.Source, m.Content, m.ID))
	}
	return dec, nil
}

// resetRepeats forgets the repeated-call run when the step enters a user's
// message (upstream's reminder resets at such a pre-step).
func (d *driver) resetRepeats(ctx context.Context, ps *preStepInfo, next func() (stepDecision, error)) (stepDecision, error) {
	if slices.ContainsFunc(ps.claimed, func(m userMessage) bool { return m.kind == "user" }) {
		d.surface.UserMessageEntered()
	}
	return next()
}

// promptSubmit is bridge b's pre-step listener: when the step claimed
// messages, its UserPromptSubmit hooks run first; a deny rejects the turn
// (the inner listeners never run); otherwise the inner decision stands,
// with the hooks' context message appended last.
func (d *driver) promptSubmit(b *hooks.Bridge) preStepListener {
	return func(ctx context.Context, ps *preStepInfo, next func() (stepDecision, error)) (stepDecision, error) {
		if len(ps.claimed) == 0 {
			return next()
		}
		contents := make([][]pipeline.Block, len(ps.claimed))
		for i, m := range ps.claimed {
			contents[i] = m.Content
		}
		pd, err := b.PromptSubmit(ctx, d.surface.Agent(), hooks.PromptText(contents))
		if err != nil {
			return stepDecision{}, err
		}
		if pd.Reject {
			return rejected(), nil
		}
		dec, err := next()
		if err != nil || pd.Context == nil || dec.stands() {
			return dec, err
		}
		dec.messages = append(dec.messages, pluginMessage(*pd.Context))
		return dec, nil
	}
}
