package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
)

// client drives the session's agent through the steps of input.json as
// upstream's snapshot harness does, over the ACP bridge: prompts (each
// waiting for its answer, sent once the agent is quiescent, except
// promptAndWaitForAgentMessage, which waits for an assistant text),
// cancellations, and the harness's waits (a turn's start or end, a child's
// turn end, a file in the workspace, the model-made title).
type client struct {
	rec    *recording.Recording
	root   *driver
	stack  *stack.Stack
	wire   *bridge
	ws     string
	family *family    // the children (nil when no delegation is composed)
	steers *webSteers // a web session's steer steps (nil: none)

	mu      sync.Mutex
	pending []*inflight // prompts sent, in order
	flags   []string
}

// run drives the steps of input.json, then waits for every prompt's
// answer; a failure of the session's agent ends it.
func (c *client) run(ctx context.Context) error {
	for i, step := range c.rec.Input.Steps {
		if hydrates(c.rec) {
			step.Text = hydrate(step.Text, c.ws)
		}
		if err := c.runInput(ctx, i, step); err != nil {
			return err
		}
		if _, err := c.root.problems(); err != nil {
			return err
		}
	}
	c.mu.Lock()
	pending := append([]*inflight(nil), c.pending...)
	c.mu.Unlock()
	for _, p := range pending {
		c.answered(ctx, p)
	}
	_, err := c.root.problems()
	return err
}

// runInput drives one step of input.json.
func (c *client) runInput(ctx context.Context, i int, step recording.Step) error {
	switch step.Op {
	case "initialize":
		c.wire.initialize()
	case "newSession":
		c.wire.newSession(c.ws, nil)
	case "newSessionExpectError":
		if c.wire.newSession(c.ws, step.AdditionalDirectories) {
			c.flag(fmt.Sprintf("%s steps[%d] newSessionExpectError: session/new succeeded (upstream's harness fails the scenario)", recording.InputFile, i))
		}
	case "prompt":
		_, err := c.promptAnswered(ctx, promptMessage([]pipeline.Block{pipeline.TextBlock(step.Text)}))
		return err
	case "promptExpectError":
		p, err := c.promptAnswered(ctx, promptMessage([]pipeline.Block{pipeline.TextBlock(step.Text)}))
		if err == nil && !p.failed {
			c.flag(fmt.Sprintf("%s steps[%d] promptExpectError: the prompt did not fail (upstream's harness fails the scenario)", recording.InputFile, i))
		}
		return err
	case recording.PermissionOp:
		return c.permission(i, step.Text)
	case recording.GoalOp:
		return c.goal(ctx, i, step.Text)
	case recording.PlanOp:
		return c.plan(ctx, i, step.Text)
	case recording.SteerOp:
		c.steer(i, step)
	case "promptContent":
		return c.promptContent(ctx, step)
	case "promptAndCancel":
		return c.promptAndCancel(ctx, i, step)
	case "cancel":
		c.cancel(ctx, i, step)
	case "promptAndWaitForAgentMessage":
		mark := len(c.wire.sent())
		if _, err := c.prompt(promptMessage([]pipeline.Block{pipeline.TextBlock(step.Text)})); err != nil {
			return err
		}
		c.wait(ctx, i, step.Op, fmt.Sprintf("no assistant text held %q", step.WaitForText), func() bool { return c.wire.textSince(mark, step.WaitForText) })
	default:
		return c.harnessWait(ctx, i, step)
	}
	return nil
}

// commandRun and commandDone are a web command's events (VERBATIM shape).
type commandRun struct {
	CommandID string            `json:"commandId"`
	Name      string            `json:"name"`
	Args      string            `json:"args"`
	Source    map[string]string `json:"source"`
}

type commandDone struct {
	CommandID string `json:"commandId"`
	Kind      string `json:"kind"`
	Text      string `json:"text"`
}

// harnessWait runs one of the harness's waits.
func (c *client) harnessWait(ctx context.Context, i int, step recording.Step) error {
	switch step.Op {
	case "waitForTurnEnd":
		c.wait(ctx, i, step.Op, "the last turn did not end", func() bool {
			n := c.root.turns()
			_, ok := c.root.turnEnded(n)
			return n > 0 && ok && c.root.handled(n)
		})
	case "waitForTurnStart":
		c.wait(ctx, i, step.Op, fmt.Sprintf("turn %d did not start", max(step.MinimumTurn, 1)), func() bool { return c.root.turns() >= max(step.MinimumTurn, 1) })
	case "waitForSubagentTurnEnd":
		c.wait(ctx, i, step.Op, fmt.Sprintf("no child turn %d ended", max(step.MinimumTurn, 1)), func() bool {
			return c.family != nil && c.family.turnEnded(step.Child, max(step.MinimumTurn, 1))
		})
	case "waitForFile":
		path := filepath.Join(c.ws, step.Path)
		c.wait(ctx, i, step.Op, step.Path+" did not appear in the workspace", func() bool { _, err := os.Stat(path); return err == nil })
	case "waitForEventAfterTurnEnd":
		c.wait(ctx, i, step.Op, fmt.Sprintf("no %s after the last turn/end", step.Type), c.logHolds(func(evs []session.Event) bool { return eventAfterTurnEnd(evs, step.Type) }))
	case "waitForGoalPhase":
		c.wait(ctx, i, step.Op, fmt.Sprintf("no goal/change in phase %q", step.Phase), c.logHolds(func(evs []session.Event) bool { return goalPhaseLogged(evs, step.Phase) }))
	case "waitForInboxMessage":
		c.wait(ctx, i, step.Op, fmt.Sprintf("no inbox message holding %q", step.Text), c.logHolds(func(evs []session.Event) bool { return inboxMessageLogged(evs, step.Text) }))
	case "waitForTitleAfterTurnEnd":
		// the title lands at its turn's end, before the prompt's answer
		if !c.root.titleLanded() {
			c.flag(fmt.Sprintf("%s steps[%d] waitForTitleAfterTurnEnd: no session/title after the turn ended", recording.InputFile, i))
		}
	default:
		return fmt.Errorf("%s: steps[%d]: step %q is not driven", recording.InputFile, i, step.Op)
	}
	return nil
}

// logHolds is a wait's condition on the session's persisted log, as
// upstream's harness polls it: holds(events), false while the log does
// not read.
func (c *client) logHolds(holds func([]session.Event) bool) func() bool {
	return func() bool {
		evs, err := c.root.log.Events()
		return err == nil && holds(evs)
	}
}

// cancel is the user's session/cancel (the cancel step), once waitForFile
// exists in the workspace when it is given: as upstream's ACP agent does,
// the running turn is cancelled whoever queued it (a goal round too), and
// a prompt in flight is answered cancelled.
func (c *client) cancel(ctx context.Context, i int, step recording.Step) {
	if step.WaitForFile != nil {
		path := filepath.Join(c.ws, step.WaitForFile.Path)
		c.wait(ctx, i, step.Op, step.WaitForFile.Path+" did not appear in the workspace; the session was not cancelled", func() bool { _, err := os.Stat(path); return err == nil })
	}
	c.mu.Lock()
	pending := append([]*inflight(nil), c.pending...)
	c.mu.Unlock()
	for _, p := range pending {
		c.wire.cancel(p)
	}
	c.root.cancelTurn(errUserCancel, true)
}

// flag records a problem of the client's steps.
func (c *client) flag(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flags = append(c.flags, s)
}

// wait polls cond every waitPoll until it holds, flagging a wait that did
// not end within waitLimit (upstream's harness fails such a run).
func (c *client) wait(ctx context.Context, i int, op, missed string, cond func() bool) {
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			c.flag(fmt.Sprintf("%s steps[%d] %s: %s within %s", recording.InputFile, i, op, missed, waitLimit))
			return
		}
		time.Sleep(waitPoll)
	}
}

// prompt sends a prompt: it is queued as the agent's next-turn message
// (an idle agent opens its turn at once) and awaits its answer.
func (c *client) prompt(msg userMessage) (*inflight, error) {
	p := c.wire.prompt(msg.ID)
	c.mu.Lock()
	c.pending = append(c.pending, p)
	c.mu.Unlock()
	return p, c.root.queue(msg)
}

// promptAnswered is [client.prompt] that waits for the answer (a prompt's
// turns take what they take: no harness limit).
func (c *client) promptAnswered(ctx context.Context, msg userMessage) (*inflight, error) {
	p, err := c.prompt(msg)
	if err != nil {
		return p, err
	}
	c.answered(ctx, p)
	return p, nil
}

// answered waits until p is answered, the replay ends, or the session's
// agent stopped (a failure of the replay).
func (c *client) answered(ctx context.Context, p *inflight) {
	select {
	case <-p.answered:
	case <-ctx.Done():
	case <-c.root.stopped:
	}
}

// promptAndCancel runs a prompt and cancels it as the user, once
// waitForFile exists in the workspace, or, without it, once its turn
// started (as upstream's harness does).
func (c *client) promptAndCancel(ctx context.Context, i int, step recording.Step) error {
	p, err := c.prompt(promptMessage([]pipeline.Block{pipeline.TextBlock(step.Text)}))
	if err != nil {
		return err
	}
	missed := "the turn did not start"
	cond := func() bool { return c.wire.started(p) || closed(p.answered) }
	if step.WaitForFile != nil {
		path := filepath.Join(c.ws, step.WaitForFile.Path)
		missed = step.WaitForFile.Path + " did not appear in the workspace"
		cond = func() bool { _, err := os.Stat(path); return err == nil || closed(p.answered) }
	}
	c.wait(ctx, i, "promptAndCancel", missed+"; the prompt was not cancelled", cond)
	if c.wire.cancel(p) {
		c.root.cancelTurn(errUserCancel, true)
	}
	c.answered(ctx, p)
	return nil
}
