package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/jobs"
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
// call while a background job runs; it also waits until the running
// background jobs settled (until they used settleCap of CPU time, at most
// settleCeiling). With no job running it answers at once.
const ModelLatency = 50 * time.Millisecond

// maxParallelToolCalls bounds a pool of concurrency-safe calls (upstream 10).
const maxParallelToolCalls = 10

// driver is the replay's agent: upstream's agent loop for one session
// (turn.go: turns, steps, the inbox, the pre-step and turn-stopping
// listeners; model.go: the constructed model's calls and the tool calls)
// behind upstream's ACP bridge (wire.go), driven by the steps of
// input.json. It writes the events upstream's agent writes, in its order
// (so seq numbers line up and session_event_read sees what upstream's
// model saw), serves the scripted replies, and runs the tool calls through
// the stack the way upstream's scheduler does.
type driver struct {
	rec    *recording.Recording
	model  Model
	system string // the request header's system prompt
	log    *session.Log
	stack  *stack.Stack
	ws     string
	turnNo int
	flags  []string
	notes  []string
	// exhausted: the script ran out (flagged once).
	exhausted bool
	wire      *bridge    // the frames the bridge sends
	gate      *jobs.Gate // the host's yields (see promptAnswered)
	inbox     *inbox
	// preStep are the pre-step listeners, outermost first (prestep.go).
	preStep []preStepListener
	// instr are the workspace instructions (nil when off).
	instr  *instructionsPlugin
	titles *titles
	headed bool // the request header and context were logged
	// compacted: the compaction fixture replaced the baseline already.
	compacted bool
}

// driverConfig is what a driver is made of.
type driverConfig struct {
	rec    *recording.Recording
	model  Model
	system string
	log    *session.Log
	stack  *stack.Stack
	ws     string
	wire   *bridge
	gate   *jobs.Gate
	inbox  *inbox
	// titleReplies are the title model's replies (sessionTitleLlm).
	titleReplies []recording.Reply
}

// newDriver composes the agent for one session: its titles, workspace
// instructions (the recording's settings) and pre-step listeners.
func newDriver(c driverConfig) *driver {
	d := &driver{rec: c.rec, model: c.model, system: c.system, log: c.log, stack: c.stack, ws: c.ws, wire: c.wire, gate: c.gate, inbox: c.inbox,
		titles: &titles{llm: c.rec.Settings.SessionTitleLLM, replies: c.titleReplies}}
	d.instr = newInstructions(d, c.rec.Settings.WorkspaceContext)
	d.preStep = d.preStepListeners()
	return d
}

// retryPolicy is a recording's retryPolicy setting with upstream's defaults
// filled in (nil: none).
func retryPolicy(p *recording.RetryPolicy) *llm.RetryPolicy {
	if p == nil {
		return nil
	}
	r := llm.DefaultRetryPolicy()
	r.Mode = p.Mode
	if p.MaxRetries != nil {
		r.MaxRetries = *p.MaxRetries
	}
	if p.RetryableCodes != nil {
		r.RetryableCodes = p.RetryableCodes
	}
	if b := p.Backoff; b != nil {
		if b.InitialDelayMs != nil {
			r.InitialDelayMs = *b.InitialDelayMs
		}
		if b.MaxDelayMs != nil {
			r.MaxDelayMs = *b.MaxDelayMs
		}
		if b.JitterRatio != nil {
			r.JitterRatio = *b.JitterRatio
		}
	}
	return &r
}

func (d *driver) append(typ string, data any) (session.Event, error) {
	return d.appendWith(typ, data, session.AppendOptions{})
}

// logAppender appends the inbox's events to the session log.
type logAppender struct{ log *session.Log }

func (a logAppender) append(typ string, data any) error {
	if _, err := a.log.Append(typ, data); err != nil {
		return fmt.Errorf("append %s to our log: %w", typ, err)
	}
	return nil
}

func (d *driver) appendWith(typ string, data any, o session.AppendOptions) (session.Event, error) {
	e, err := d.log.AppendWith(typ, data, o)
	if err != nil {
		return e, fmt.Errorf("append %s to our log: %w", typ, err)
	}
	return e, nil
}

// run drives the steps of input.json; the session is the replay's log, made
// by newSession (a session that was never made gets no turn).
func (d *driver) run(ctx context.Context) error {
	for i, step := range d.rec.Input.Steps {
		if err := d.runInput(ctx, i, step); err != nil {
			return err
		}
	}
	return nil
}

// runInput drives one step of input.json.
func (d *driver) runInput(ctx context.Context, i int, step recording.Step) error {
	switch step.Op {
	case "initialize":
		d.wire.initialize()
	case "newSession":
		d.wire.newSession(d.ws, nil)
	case "newSessionExpectError":
		if d.wire.newSession(d.ws, step.AdditionalDirectories) {
			d.flags = append(d.flags, fmt.Sprintf("%s steps[%d] newSessionExpectError: session/new succeeded (upstream's harness fails the scenario)", recording.InputFile, i))
		}
	case "prompt":
		return d.prompt(ctx, step.Text, nil)
	case "promptExpectError":
		p, err := d.promptAnswered(ctx, step.Text, nil)
		if err == nil && !p.failed {
			d.flags = append(d.flags, fmt.Sprintf("%s steps[%d] promptExpectError: the prompt did not fail (upstream's harness fails the scenario)", recording.InputFile, i))
		}
		return err
	case "promptContent":
		return d.promptContent(ctx, step)
	case "promptAndCancel":
		return d.promptAndCancel(ctx, i, step)
	case "waitForTurnEnd":
		// each turn of the replay ends before the next step runs
	case "waitForTitleAfterTurnEnd":
		if !d.titles.titled || d.titles.pending != nil {
			d.flags = append(d.flags, fmt.Sprintf("%s steps[%d] waitForTitleAfterTurnEnd: no session/title after the turn ended", recording.InputFile, i))
		}
	default:
		return fmt.Errorf("%s: steps[%d]: step %q is not driven", recording.InputFile, i, step.Op)
	}
	return nil
}

// promptAndCancel runs a prompt and cancels it as the user, once
// waitForFile exists in the workspace, or, without it, once the turn
// started (as upstream's harness does).
func (d *driver) promptAndCancel(ctx context.Context, i int, step recording.Step) error {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	started := make(chan struct{})
	done := make(chan struct{})
	var missed string
	go func() {
		defer close(done)
		deadline := time.NewTimer(waitLimit)
		defer deadline.Stop()
		tick := time.NewTicker(waitPoll)
		defer tick.Stop()
		if step.WaitForFile == nil {
			select {
			case <-started:
				cancel(errUserCancel)
			case <-deadline.C:
				missed = "the turn did not start"
			case <-cctx.Done():
			}
			return
		}
		path := filepath.Join(d.ws, step.WaitForFile.Path)
		for {
			if _, err := os.Stat(path); err == nil {
				cancel(errUserCancel)
				return
			}
			select {
			case <-tick.C:
			case <-deadline.C:
				missed = step.WaitForFile.Path + " did not appear in the workspace"
				return
			case <-cctx.Done():
				return
			}
		}
	}()
	err := d.prompt(cctx, step.Text, started)
	cancel(nil)
	<-done
	if missed != "" {
		d.flags = append(d.flags, fmt.Sprintf("%s steps[%d] promptAndCancel: %s within %s; the prompt was not cancelled", recording.InputFile, i, missed, waitLimit))
	}
	return err
}

// prompt sends a prompt and waits for its answer.
func (d *driver) prompt(ctx context.Context, text string, started chan struct{}) error {
	_, err := d.promptAnswered(ctx, text, started)
	return err
}

// promptAnswered is [driver.prompt] that also returns the prompt's
// answer state: the prompt is queued as the next-turn message, the agent
// runs turns until idle, and the bridge answers.
func (d *driver) promptAnswered(ctx context.Context, text string, started chan struct{}) (*inflight, error) {
	return d.promptMessageAnswered(ctx, promptMessage([]pipeline.Block{pipeline.TextBlock(text)}), started)
}

// promptMessageAnswered is [driver.promptAnswered] for a prompt's message
// (its text, or a promptContent step's admitted blocks).
func (d *driver) promptMessageAnswered(ctx context.Context, msg userMessage, started chan struct{}) (*inflight, error) {
	d.gate.Pump() // the prompt came from the client: the host yielded
	p := d.wire.prompt(msg.ID)
	if err := d.inbox.add(nextTurn, msg); err != nil {
		return p, err
	}
	err := d.runTurns(ctx, started)
	if errors.Is(context.Cause(ctx), errUserCancel) {
		p.cancelled = true
	}
	d.wire.idle()
	return p, err
}

// abortReason is the turn/end reason of a turn whose context ended.
func abortReason(ctx context.Context) map[string]any {
	if errors.Is(context.Cause(ctx), errUserCancel) {
		return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "user"}}
	}
	return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "replay-stopped", "error": context.Cause(ctx).Error()}}
}

func newUUID() string {
	var b [16]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
