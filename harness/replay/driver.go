package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/toolschema"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
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
// call; it also waits until the running background jobs settled (at most
// settleCap).
const ModelLatency = 50 * time.Millisecond

// maxParallelToolCalls bounds a pool of concurrency-safe calls (upstream 10).
const maxParallelToolCalls = 10

// driver is the replay's agent loop: it writes the events upstream's agent
// writes, in its order (so seq numbers line up and session_event_read sees
// what upstream's model saw), serves the scripted replies, and runs the tool
// calls through the stack the way upstream's scheduler does.
type driver struct {
	rec       *recording.Recording
	script    *recording.Script
	log       *session.Log
	stack     *stack.Stack
	ws        string
	next      int
	turnNo    int
	flags     []string
	exhausted bool
	wire      *answers   // the frames the bridge would send
	settle    *settler   // the model's wait for the background jobs
	gate      *jobs.Gate // the host's yields (see turnWith, modelCall)
	inbox     *inbox
	titled    bool
	headed    bool
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

// appendMessages appends inbox messages as user/message events, each
// surfaced with op append.
func (d *driver) appendMessages(ms []userMessage) error {
	for _, m := range ms {
		if _, err := d.appendWith("user/message", m, session.AppendOptions{SurfaceOp: "append"}); err != nil {
			return err
		}
	}
	return nil
}

// run drives the steps of input.json.
func (d *driver) run(ctx context.Context) error {
	for i, step := range d.rec.Input.Steps {
		switch step.Op {
		case "initialize", "newSession":
			// the replay's session is the new session
		case "prompt":
			if err := d.turn(ctx, step.Text); err != nil {
				return err
			}
		case "promptAndCancel":
			if err := d.promptAndCancel(ctx, i, step); err != nil {
				return err
			}
		case "waitForTurnEnd":
			// each turn of the replay ends before the next step runs
		default:
			return fmt.Errorf("%s: steps[%d]: step %q is not driven", recording.InputFile, i, step.Op)
		}
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
	err := d.turnWith(cctx, step.Text, started)
	cancel(nil)
	<-done
	if missed != "" {
		d.flags = append(d.flags, fmt.Sprintf("%s steps[%d] promptAndCancel: %s within %s; the prompt was not cancelled", recording.InputFile, i, missed, waitLimit))
	}
	return err
}

func (d *driver) turn(ctx context.Context, prompt string) error {
	return d.turnWith(ctx, prompt, nil)
}

// abortReason is the turn/end reason of a turn whose context ended.
func abortReason(ctx context.Context) map[string]any {
	if errors.Is(context.Cause(ctx), errUserCancel) {
		return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "user"}}
	}
	return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "replay-stopped", "error": context.Cause(ctx).Error()}}
}

// turnWith runs one prompt's turn; started (if not nil) is closed once
// turn/start is in the log.
func (d *driver) turnWith(ctx context.Context, prompt string, started chan struct{}) error {
	t, err := d.openTurn(prompt, started)
	if err != nil {
		return err
	}
	var claimed []userMessage
	for step := 1; ; step++ {
		if ctx.Err() != nil {
			return d.endTurn(t.turn, abortReason(ctx))
		}
		if err := d.openStep(ctx, t, step, claimed); err != nil {
			return err
		}
		end, calls, finish, err := d.modelCall(ctx, t.turn, step)
		if err != nil {
			return err
		}
		if end != nil {
			if _, err := d.append("step/end", stepData{t.turn, step}); err != nil {
				return err
			}
			return d.endTurn(t.turn, end)
		}
		concludes, err := d.runCalls(ctx, t.turn, step, calls)
		if err != nil {
			return err
		}
		if _, err := d.append("step/end", stepData{t.turn, step}); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return d.endTurn(t.turn, abortReason(ctx)) // no claim: the next turn's start claims the inbox
		}
		if claimed, err = d.inbox.afterStep(); err != nil {
			return err
		}
		if len(calls) > 0 && !concludes {
			continue
		}
		if len(claimed) > 0 {
			continue // a claimed notice keeps the turn open for one more step
		}
		kind := "completed"
		if finish == "max-tokens" {
			kind = "max-tokens"
		}
		return d.endTurn(t.turn, map[string]any{"kind": kind})
	}
}

// openedTurn is a turn that started: its number, its prompt and the
// prompt's message, and what the inbox carried into it.
type openedTurn struct {
	turn    int
	prompt  string
	msg     userMessage
	carried []userMessage
}

// openTurn starts a prompt's turn: the prompt spliced into the next-turn
// inbox, turn/start (then started is closed, if not nil), and the inbox's
// claims.
func (d *driver) openTurn(prompt string, started chan struct{}) (*openedTurn, error) {
	d.gate.Pump() // the prompt came from the client: the host yielded
	d.turnNo++
	t := &openedTurn{turn: d.turnNo, prompt: prompt}
	t.msg = userMessage{Content: []pipeline.Block{pipeline.TextBlock(prompt)}, Source: kindOnly{"user"}, Role: "user", ID: newUUID()}
	if _, err := d.append("agent/inbox/spliced", splice{Target: "next-turn", Start: 0, Inserted: []userMessage{t.msg}}); err != nil {
		return nil, err
	}
	if _, err := d.append("turn/start", turnData{t.turn}); err != nil {
		return nil, err
	}
	if started != nil {
		close(started)
	}
	// The next-step inbox is claimed at turn start too, before the prompt's
	// next-turn claim: what an aborted turn left there (it ends without a
	// claim, e.g. a hook's context on a cancelled run_code) reaches the model
	// ahead of the prompt, as upstream's loop delivers it.
	carried, err := d.inbox.afterStep()
	if err != nil {
		return nil, err
	}
	t.carried = carried
	one := 1
	if _, err := d.append("agent/inbox/spliced", splice{Target: "next-turn", Start: 0, RemovedCount: &one, Inserted: []userMessage{}}); err != nil {
		return nil, err
	}
	return t, nil
}

// openStep starts a step of turn t: step/start, the messages the model gets
// new (on the first step what the inbox carried and the prompt; then what
// the last step claimed), the runtime context, and the first request's
// title and header.
func (d *driver) openStep(ctx context.Context, t *openedTurn, step int, claimed []userMessage) error {
	if _, err := d.append("step/start", stepData{t.turn, step}); err != nil {
		return err
	}
	var promptSeq int64
	if step == 1 {
		if err := d.appendMessages(t.carried); err != nil {
			return err
		}
		e, err := d.appendWith("user/message", t.msg, session.AppendOptions{SurfaceOp: "append"})
		if err != nil {
			return err
		}
		promptSeq = e.Seq
	}
	if err := d.appendMessages(claimed); err != nil {
		return err
	}
	if _, err := d.stack.SyncContext(ctx); err != nil {
		return fmt.Errorf("runtime context: %w", err)
	}
	return d.firstRequest(t.prompt, promptSeq)
}

// endTurn writes turn/end with reason and sends the prompt's stop reason.
func (d *driver) endTurn(turn int, reason map[string]any) error {
	_, err := d.append("turn/end", turnEndData{Turn: turn, Reason: reason})
	d.wire.send(acpwire.Stop(stopReason(reason)))
	return err
}

// firstRequest writes the session title and the request header and context
// of the session's first model request (upstream writes them once).
func (d *driver) firstRequest(prompt string, promptSeq int64) error {
	if !d.titled {
		d.titled = true
		if _, err := d.append("session/title", titleData{Title: fallbackTitle(prompt), MessageSeqs: []int64{promptSeq}, Source: kindOnly{"fallback"}}); err != nil {
			return err
		}
	}
	if d.headed {
		return nil
	}
	d.headed = true
	config, _ := json.Marshal(modelSource{Kind: "replay", Provider: ModelProvider, Model: ModelName})
	var h headerData
	h.Header.Config = config
	h.Header.System = "(not modelled: dsh-replay composes the tool stack, not upstream's system prompt)"
	h.Header.Tools = d.headerTools()
	h.Reason = "initial"
	if _, err := d.append("request/header", h); err != nil {
		return err
	}
	_, err := d.append("request/context", map[string]string{"provider": ModelProvider, "model": ModelName})
	return err
}

// headerTools lists the tools the model is offered (the stack's wire list:
// sorted by name, run_code alone in code mode), as upstream's header stores
// them ({name, description, parameters}).
func (d *driver) headerTools() []any {
	defs := d.stack.WireTools()
	out := make([]any, len(defs))
	for i, t := range defs {
		out[i] = json.RawMessage(toolschema.Schema{Name: t.Name, Description: t.Description, Parameters: t.Parameters}.JSON())
	}
	return out
}

// fallbackTitle is upstream's fallback session title: the prompt's first
// five words, at most 40 bytes.
func fallbackTitle(prompt string) string {
	words := strings.Fields(prompt)
	title := strings.Join(words[:min(5, len(words))], " ")
	if len(title) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(title[cut]) {
			cut--
		}
		title = strings.TrimSpace(title[:cut])
	}
	return title
}

// modelCall serves the next scripted reply: its chunks, then the assistant
// message. end is set when the turn ends with this step (exhausted script,
// a thrown stream, a hang the user cancelled).
func (d *driver) modelCall(ctx context.Context, turn, step int) (end map[string]any, calls []recording.ToolCall, finish string, err error) {
	if d.next >= len(d.script.Replies) {
		return d.exhaust(), nil, "", nil
	}
	reply := d.script.Replies[d.next]
	d.next++
	if err := d.think(ctx); err != nil {
		return nil, nil, "", err
	}
	seqs := make([]int64, 0, len(reply.Chunks))
	for _, c := range reply.Chunks {
		e, err := d.append("assistant/chunk", chunkData{Turn: turn, Step: step, Chunk: ordered(c)})
		if err != nil {
			return nil, nil, "", err
		}
		seqs = append(seqs, e.Seq)
	}
	body := assistantBody{Role: "assistant", Source: modelSource{Kind: "model", Provider: ModelProvider, Model: ModelName}, ID: newUUID()}
	data := assistantData{Turn: turn, Step: step}
	msgOpts := session.AppendOptions{SourceEventSeqs: seqs, SurfaceOp: "append"}
	if reply.Hang != nil {
		if reply.Hang.ReadyFile != "" {
			if err := os.WriteFile(filepath.Join(d.ws, reply.Hang.ReadyFile), nil, 0o644); err != nil {
				return nil, nil, "", fmt.Errorf("hang: write the ready file: %w", err)
			}
		}
		<-ctx.Done()
		body.Content = []any{textBlock{"text", "partial"}}
		data.Message, data.Interrupted = body, true
		if _, err := d.appendWith("assistant/message", data, msgOpts); err != nil {
			return nil, nil, "", err
		}
		return abortReason(ctx), nil, "", nil
	}
	body.Content = replyContent(reply)
	data.Message = body
	if reply.Usage != nil {
		var u any
		if json.Unmarshal(reply.Usage, &u) == nil {
			data.Usage = ordered(u)
		}
	}
	if _, err := d.appendWith("assistant/message", data, msgOpts); err != nil {
		return nil, nil, "", err
	}
	if reply.Throw != nil {
		e := map[string]any{"name": "LlmError", "message": reply.Throw.Message}
		if reply.Throw.Code != "" {
			e["code"] = reply.Throw.Code
		}
		return map[string]any{"kind": "error", "error": e}, nil, "", nil
	}
	return nil, reply.ToolCalls, reply.Finish, nil
}

// exhaust is the end of a turn whose model call found the script
// exhausted (llm-replay's error), flagged the first time.
func (d *driver) exhaust() map[string]any {
	msg := fmt.Sprintf("llm-replay: script exhausted — session requested model call #%d but its script has only %d", d.next+1, len(d.script.Replies))
	if !d.exhausted {
		d.flags = append(d.flags, "script exhausted: "+msg)
		d.exhausted = true
	}
	return map[string]any{"kind": "error", "error": map[string]any{"name": "LlmError", "message": msg}}
}

// think is the constructed model's time to answer.
func (d *driver) think(ctx context.Context) error {
	// The constructed model takes as long as a model takes: at least
	// ModelLatency, and until the running background jobs settled (settler).
	// Upstream's recordings were made at a model's pace, and one of them
	// (background-job-admission) depends on a background job's first command
	// having run before two more model calls came back; a fixed sleep is a
	// race on a loaded machine.
	//
	// Upstream's replay model (llm-replay) answers without yielding to the
	// host's event loop unless it is paced (paceMs: a timer per chunk), so
	// the jobs' output and exits that arrive meanwhile are observed only at
	// the next yield (jobs.Gate); a paced recording (pacedModel) yields here.
	answerAt := time.Now().Add(ModelLatency)
	if err := d.settle.wait(ctx); err != nil {
		return err
	}
	select {
	case <-time.After(time.Until(answerAt)):
	case <-ctx.Done():
	}
	if d.rec.Settings.PacedModel {
		d.gate.Pump()
	}
	return nil
}

// replyContent is the assistant message's content: the reply's text and
// tool-call blocks.
func replyContent(reply recording.Reply) []any {
	content := make([]any, 0, len(reply.Blocks))
	for _, b := range reply.Blocks {
		if b.Type == "tool-call" {
			content = append(content, toolCallBlock{b.Type, b.ID, b.Name, b.Arguments})
		} else {
			content = append(content, textBlock{b.Type, b.Text})
		}
	}
	return content
}

// concurrencySafe reports whether the stack's tool may run in a pool.
func (d *driver) concurrencySafe(name string) bool {
	for _, t := range d.stack.Definitions() {
		if t.Name == name {
			return t.ConcurrencySafe
		}
	}
	return false
}

// runCalls runs a step's calls as upstream's scheduler does: an exclusive
// call alone (tool/call, then its result), consecutive concurrency-safe calls
// as one pool (all their tool/call events, then the results in model order).
// A call reached after the prompt was cancelled still gets its tool/call and
// is answered before dispatch (the pipeline never runs it).
func (d *driver) runCalls(ctx context.Context, turn, step int, calls []recording.ToolCall) (concludes bool, err error) {
	for i := 0; i < len(calls); {
		j := i + 1
		if d.concurrencySafe(calls[i].Name) {
			for j < len(calls) && j-i < maxParallelToolCalls && d.concurrencySafe(calls[j].Name) {
				j++
			}
		}
		pool := calls[i:j]
		seqs := make([]int64, len(pool))
		for k, tc := range pool {
			e, err := d.append("tool/call", toolCallData{Turn: turn, Step: step, CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			if err != nil {
				return false, err
			}
			seqs[k] = e.Seq
		}
		results := make([]pipeline.Result, len(pool))
		var wg sync.WaitGroup
		for k, tc := range pool {
			wg.Go(func() { results[k] = d.stack.Execute(ctx, tc.ID, tc.Name, json.RawMessage(tc.Arguments)) })
		}
		wg.Wait()
		for k, tc := range pool {
			r := results[k]
			concludes = concludes || r.ConcludesTurn
			content := r.Content
			if content == nil {
				content = []pipeline.Block{}
			}
			data := toolResultData{Turn: turn, Step: step, Meta: r.Meta, Sandbox: sandbox.FactsOf(r.Sandbox), Message: toolResultMessage{
				Source:  toolSource{"tool", tc.ID},
				Content: []toolResultBlock{{Type: "tool-result", ToolCallID: tc.ID, Content: content, IsError: r.IsError}},
				Role:    "user", ID: newUUID(),
			}}
			if r.Error != nil && r.Error.Info != nil {
				data.Error = r.Error.Info
			}
			if _, err := d.appendWith("tool/result", data, session.AppendOptions{SourceEventSeqs: []int64{seqs[k]}, SurfaceOp: "append"}); err != nil {
				return false, err
			}
			if err := d.inbox.stage(r.ContextMessages); err != nil {
				return false, err
			}
		}
		i = j
	}
	return concludes, nil
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
