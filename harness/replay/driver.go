package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
)

// errUserCancel is the cause of a prompt the user cancelled (promptAndCancel).
var errUserCancel error = userCancel{}

// userCancel is the user's cancellation. Upstream aborts the turn with the
// reason {kind: "user"}, a plain object, so a run_code program cancelled by
// the user fails with String(reason): "code run failed (abort): [object
// Object]" (the oracle recording code-mode-cancel).
type userCancel struct{}

func (userCancel) Error() string { return "the user cancelled the prompt" }

// JSString is String({kind: "user"}) (noderuntime.JSReason).
func (userCancel) JSString() string { return "[object Object]" }

// waitLimit bounds the harness waits (upstream: 10 s, polling every 10 ms).
const (
	waitLimit = 10 * time.Second
	waitPoll  = 10 * time.Millisecond
)

// ModelLatency is the least time the constructed model takes to answer a
// call; it also waits until the running background jobs settled (at most
// settleCap).
const ModelLatency = 50 * time.Millisecond

// maxParallelToolCalls bounds a pool of concurrency-safe calls (upstream 10).
const maxParallelToolCalls = 10

// driver drives the session's agent through the steps of input.json as
// upstream's snapshot harness does: prompts answered once the agent is
// quiescent, cancellations, and the harness's waits (a turn's start or end,
// a child's turn end, a file in the workspace).
type driver struct {
	rec    *recording.Recording
	stack  *stack.Stack // the session's
	root   *agent
	ws     string
	wire   *answers
	family *family // the children (nil when no delegation is composed)

	mu      sync.Mutex
	answers []chan struct{} // one per prompt, closed once its answer is sent
	flags   []string
}

// run drives the steps of input.json, then waits for every prompt's
// answer; a failure of the session's agent ends it.
func (d *driver) run(ctx context.Context) error {
	for i, step := range d.rec.Input.Steps {
		if err := d.step(ctx, i, step); err != nil {
			return err
		}
		if _, err := d.root.problems(); err != nil {
			return err
		}
	}
	d.mu.Lock()
	pending := append([]chan struct{}(nil), d.answers...)
	d.mu.Unlock()
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return nil
		}
	}
	_, err := d.root.problems()
	return err
}

// step runs step i.
func (d *driver) step(ctx context.Context, i int, step recording.Step) error {
	switch step.Op {
	case "initialize":
		if d.stack.Attachments() != nil && d.stack.ImageInput() {
			d.wire.send(acpwire.InitializedWithImages())
		} else {
			d.wire.send(acpwire.Initialized())
		}
	case "newSession":
		d.wire.send(acpwire.SessionCreated()) // the replay's session is the new session
	case "promptContent":
		return d.promptContent(ctx, step)
	case "prompt":
		_, answered, err := d.prompt(ctx, textPrompt(step.Text))
		if err != nil {
			return err
		}
		select { // a prompt's turns take what they take: no harness limit
		case <-answered:
		case <-ctx.Done():
		}
	case "promptAndCancel":
		return d.promptAndCancel(ctx, i, step)
	case "promptAndWaitForAgentMessage":
		mark := len(d.wire.sent())
		if _, _, err := d.prompt(ctx, textPrompt(step.Text)); err != nil {
			return err
		}
		d.wait(ctx, i, step.Op, fmt.Sprintf("no assistant text held %q", step.WaitForText), func() bool { return d.wire.textSince(mark, step.WaitForText) })
	case "waitForTurnEnd":
		d.wait(ctx, i, step.Op, "the last turn did not end", func() bool {
			n := d.root.turns()
			_, ok := d.root.turnEnded(n)
			return n > 0 && ok
		})
	case "waitForTurnStart":
		d.wait(ctx, i, step.Op, fmt.Sprintf("turn %d did not start", max(step.MinimumTurn, 1)), func() bool { return d.root.turns() >= max(step.MinimumTurn, 1) })
	case "waitForSubagentTurnEnd":
		d.wait(ctx, i, step.Op, fmt.Sprintf("no child turn %d ended", max(step.MinimumTurn, 1)), func() bool {
			return d.family != nil && d.family.turnEnded(step.Child, max(step.MinimumTurn, 1))
		})
	case "waitForFile":
		path := filepath.Join(d.ws, step.Path)
		d.wait(ctx, i, step.Op, step.Path+" did not appear in the workspace", func() bool { _, err := os.Stat(path); return err == nil })
	default:
		return fmt.Errorf("%s: steps[%d]: step %q is not driven", recording.InputFile, i, step.Op)
	}
	return nil
}

// closed reports whether ch is closed.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// wait polls cond every waitPoll until it holds, flagging a wait that did
// not end within waitLimit (upstream's harness fails such a run).
func (d *driver) wait(ctx context.Context, i int, op, missed string, cond func() bool) {
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			d.mu.Lock()
			d.flags = append(d.flags, fmt.Sprintf("%s steps[%d] %s: %s within %s", recording.InputFile, i, op, missed, waitLimit))
			d.mu.Unlock()
			return
		}
		time.Sleep(waitPoll)
	}
}

// prompt queues a user prompt as a later turn and answers it, in its own
// goroutine, once the agent is quiescent after the turn that claimed it
// (upstream's ACP bridge answers only then): with that turn's stop reason.
func (d *driver) prompt(ctx context.Context, content []pipeline.Block) (userMessage, chan struct{}, error) {
	d.root.gate.Pump() // the prompt came from the client: the host yielded
	m := userMessage{Content: make([]any, len(content)), Source: kindOnly{"user"}, Role: "user", ID: newUUID()}
	for i, b := range content {
		m.Content[i] = b
	}
	answered := make(chan struct{})
	d.mu.Lock()
	d.answers = append(d.answers, answered)
	d.mu.Unlock()
	if err := d.root.queue(m); err != nil {
		close(answered)
		return m, answered, err
	}
	go func() {
		defer close(answered)
		var reason map[string]any
		err := d.root.waitUntil(ctx, func() bool {
			t, ok := d.root.claimedBy[m.ID]
			if !ok {
				return false
			}
			r, ok := d.root.ended[t]
			reason = r
			return ok && d.root.idleLocked()
		})
		if err == nil && reason != nil {
			d.wire.send(promptResult(reason))
		}
	}()
	return m, answered, nil
}

// promptAndCancel runs a prompt and cancels it as the user, once
// waitForFile exists in the workspace, or, without it, once its turn
// started (as upstream's harness does).
func (d *driver) promptAndCancel(ctx context.Context, i int, step recording.Step) error {
	m, answered, err := d.prompt(ctx, textPrompt(step.Text))
	if err != nil {
		return err
	}
	started := func() bool {
		d.root.mu.Lock()
		defer d.root.mu.Unlock()
		_, ok := d.root.claimedBy[m.ID]
		return ok
	}
	missed := "the turn did not start"
	cond := started
	if step.WaitForFile != nil {
		path := filepath.Join(d.ws, step.WaitForFile.Path)
		missed = step.WaitForFile.Path + " did not appear in the workspace"
		cond = func() bool { _, err := os.Stat(path); return err == nil || closed(answered) }
	}
	d.wait(ctx, i, "promptAndCancel", missed+"; the prompt was not cancelled", cond)
	if !closed(answered) {
		d.root.cancelTurn(errUserCancel, true)
	}
	select {
	case <-answered:
	case <-ctx.Done():
	}
	return nil
}

// textPrompt is a prompt of one text block.
func textPrompt(text string) []pipeline.Block { return []pipeline.Block{pipeline.TextBlock(text)} }

// turns is the number of the last turn started.
func (a *agent) turns() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.turnNo
}

func newUUID() string { return session.NewID() }

// promptResult is the frame answering a prompt whose turn ended with
// reason: its stop reason, or the JSON-RPC error of a failed turn.
func promptResult(reason map[string]any) acpwire.Frame {
	if r := stopReason(reason); r != "" {
		return acpwire.Stop(r)
	}
	msg := ""
	if e, ok := reason["error"].(map[string]any); ok {
		msg, _ = e["message"].(string)
	} else if raw, ok := reason["error"].(json.RawMessage); ok {
		var e struct{ Message string }
		_ = json.Unmarshal(raw, &e)
		msg = e.Message
	}
	return acpwire.Failed(msg)
}
