package hooks

import (
	"context"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
)

// FallbackStopReason is the steering text of a Stop hook that blocked
// without a reason (VERBATIM).
const FallbackStopReason = "continue: blocked by Stop hook"

// PromptDecision is a bridge's answer to a step's claimed messages.
type PromptDecision struct {
	// Reject ends the turn blocked, before its step: a UserPromptSubmit
	// hook denied (exit 2, or decision block). The bridges and pre-step
	// listeners inside this one never run.
	Reject bool
	// Context is the hooks' additionalContext as one message of the
	// bridge's plugin, one text block per hook (nil when none); the agent
	// appends it after the step's other messages.
	Context *pipeline.ContextMessage
}

// PromptSubmit runs the UserPromptSubmit hooks for a pre-step whose claimed
// messages (the prompt, or steering and notices claimed at a later step)
// have the text prompt, each hook logged in agent's session; the caller
// skips it when nothing was claimed, as upstream does. A bridge whose
// config did not load decides nothing. Its only error is a session log that
// cannot be read or appended to.
func (b *Bridge) PromptSubmit(ctx context.Context, agent *pipeline.Agent, prompt string) (PromptDecision, error) {
	if b.cfg == nil {
		return PromptDecision{}, nil
	}
	m, err := b.run(ctx, UserPromptSubmit, agent, "", callFacts{Prompt: prompt})
	if err != nil {
		return PromptDecision{}, err
	}
	if m.rank == 3 {
		return PromptDecision{Reject: true}, nil
	}
	var d PromptDecision
	if len(m.contexts) > 0 {
		d.Context = &pipeline.ContextMessage{Plugin: b.d.Plugin, Texts: append([]string(nil), m.contexts...)}
	}
	return d, nil
}

// Stop runs the Stop hooks when agent's turn would stop (its step ended and
// nothing waits for the next one). A block returns the steering message the
// agent queues for the next step, which keeps the turn going: the merged
// reason (exit 2: the stderr), else [FallbackStopReason]. There is no loop
// guard: stop_hook_active is always false, as upstream sends it.
func (b *Bridge) Stop(ctx context.Context, agent *pipeline.Agent) (*pipeline.ContextMessage, error) {
	if b.cfg == nil {
		return nil, nil
	}
	m, err := b.run(ctx, Stop, agent, "", callFacts{})
	if err != nil || m.rank != 3 {
		return nil, err
	}
	reason := m.reason
	if reason == "" {
		reason = FallbackStopReason
	}
	return &pipeline.ContextMessage{Plugin: b.d.Plugin, Texts: []string{reason}}, nil
}

// PromptText is the prompt a UserPromptSubmit payload carries for the
// claimed messages: the text of their text blocks joined with nothing
// (images and other blocks dropped).
func PromptText(messages [][]pipeline.Block) string {
	var b strings.Builder
	for _, m := range messages {
		for _, c := range m {
			if c.Type == "text" {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}
