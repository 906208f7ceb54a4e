package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/toolschema"
	"github.com/dshsim/dshsim/llm"
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
// call while a background job runs; it also waits until the running
// background jobs settled (until they used settleCap of CPU time, at most
// settleCeiling). With no job running it answers at once.
const ModelLatency = 50 * time.Millisecond

// maxParallelToolCalls bounds a pool of concurrency-safe calls (upstream 10).
const maxParallelToolCalls = 10

// driver is the replay's agent loop: it writes the events upstream's agent
// writes, in its order (so seq numbers line up and session_event_read sees
// what upstream's model saw), serves the scripted replies, and runs the tool
// calls through the stack the way upstream's scheduler does.
type driver struct {
	rec       *recording.Recording
	model     Model
	system    string // the request header's system prompt
	log       *session.Log
	stack     *stack.Stack
	ws        string
	turnNo    int
	flags     []string
	exhausted bool
	wire      *answers   // the frames the bridge would send
	gate      *jobs.Gate // the host's yields (see turnWith, modelCall)
	inbox     *inbox
	titled    bool
	// promptBlocks are the admitted content of a promptContent step, for
	// the turn it opens.
	promptBlocks []pipeline.Block
	headed       bool
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
		case "initialize":
			if d.stack.Attachments() != nil && d.stack.ImageInput() {
				d.wire.send(acpwire.InitializedWithImages())
			} else {
				d.wire.send(acpwire.Initialized())
			}
		case "newSession":
			d.wire.send(acpwire.SessionCreated()) // the replay's session is the new session
		case "prompt":
			if err := d.turn(ctx, step.Text); err != nil {
				return err
			}
		case "promptContent":
			if err := d.promptContent(ctx, step); err != nil {
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
	content := []pipeline.Block{pipeline.TextBlock(prompt)}
	if d.promptBlocks != nil { // a promptContent step's admitted blocks
		content, d.promptBlocks = d.promptBlocks, nil
	}
	t.msg = userMessage{Content: content, Source: kindOnly{"user"}, Role: "user", ID: newUUID()}
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
	if _, err := d.stack.SyncCatalog(ctx); err != nil {
		return fmt.Errorf("skill catalog: %w", err)
	}
	return d.firstRequest(t.prompt, promptSeq)
}

// endTurn writes turn/end with reason and sends the prompt's stop reason.
func (d *driver) endTurn(turn int, reason map[string]any) error {
	_, err := d.append("turn/end", turnEndData{Turn: turn, Reason: reason})
	d.wire.send(promptResult(reason))
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
	info := d.model.Info()
	var h headerData
	h.Header.Config = info.Config
	h.Header.System = d.system
	h.Header.Tools = d.headerTools()
	h.Reason = "initial"
	if _, err := d.append("request/header", h); err != nil {
		return err
	}
	_, err := d.append("request/context", requestContext{Provider: info.Provider, Model: info.Model})
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

// modelCall asks the model for the step's reply: its chunks (with the
// retries its policy allows), then the assistant message. end is set when
// the turn ends with this step (exhausted script, a failed or thrown call, a
// hang the user cancelled).
func (d *driver) modelCall(ctx context.Context, turn, step int) (end map[string]any, calls []recording.ToolCall, finish string, err error) {
	reply, seqs, err := d.callModel(ctx, turn, step)
	if msg, ok := isExhausted(err); ok {
		return d.exhaust(msg), nil, "", nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	info := d.model.Info()
	body := assistantBody{Role: "assistant", Source: modelSource{Kind: "model", Provider: info.Provider, Model: info.Model}, ID: newUUID()}
	data := assistantData{Turn: turn, Step: step}
	msgOpts := session.AppendOptions{SourceEventSeqs: seqs, SurfaceOp: "append"}
	switch {
	case reply.Hang != nil:
		body.Content = []any{textBlock{"text", "partial"}}
		data.Message, data.Interrupted = body, true
		if _, err := d.appendWith("assistant/message", data, msgOpts); err != nil {
			return nil, nil, "", err
		}
		d.wire.send(acpwire.AgentText("partial"))
		return abortReason(ctx), nil, "", nil
	case reply.Finish == "error" && ctx.Err() != nil:
		return abortReason(ctx), nil, "", nil
	case reply.Finish == "error":
		var failure any = map[string]any{}
		var f any
		if reply.Failure != nil && json.Unmarshal(reply.Failure, &f) == nil {
			failure = ordered(f)
		}
		return map[string]any{"kind": "error", "error": failure}, nil, "", nil
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
	for _, b := range reply.Blocks {
		if b.Type == "text" {
			d.wire.send(acpwire.AgentText(b.Text))
		}
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
func (d *driver) exhaust(msg string) map[string]any {
	if !d.exhausted {
		d.flags = append(d.flags, "script exhausted: "+msg)
		d.exhausted = true
	}
	return map[string]any{"kind": "error", "error": map[string]any{"name": "LlmError", "message": msg}}
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

// callModel makes the step's model call, logging every chunk as it comes,
// and retries a failed call while the model's retry policy allows (each
// retry logged as llm/retry, then llm/retry-started after its delay, and
// the retried call's chunks in the same step). seqs are the chunks of the
// reply returned.
func (d *driver) callModel(ctx context.Context, turn, step int) (reply recording.Reply, seqs []int64, err error) {
	info := d.model.Info()
	req := ModelRequest{Turn: turn, Step: step, Log: d.log, System: d.system, Tools: d.stack.WireTools()}
	var retryID string
	for retry := 0; ; retry++ {
		seqs = nil
		emit := func(c json.RawMessage) error {
			e, err := d.append("assistant/chunk", chunkData{Turn: turn, Step: step, Chunk: c})
			seqs = append(seqs, e.Seq)
			return err
		}
		reply, err = d.model.Call(ctx, req, emit)
		if err != nil || reply.Finish != "error" || info.Retry == nil || ctx.Err() != nil {
			return reply, seqs, err
		}
		var f llm.Failure
		if reply.Failure == nil || json.Unmarshal(reply.Failure, &f) != nil {
			return reply, seqs, nil
		}
		delay, ok := info.Retry.Decide(&f, retry, mrand.Float64())
		if !ok {
			return reply, seqs, nil
		}
		if retryID == "" {
			retryID = newUUID()
		}
		ev := retryData{RetryID: retryID, Turn: turn, Step: step, Provider: info.Provider, Mode: info.Retry.Mode,
			PolicyKey: info.Retry.Key(), Retry: retry + 1, DelayMs: delay, Failure: reply.Failure}
		if info.Retry.Mode != llm.RetryAlways {
			ev.MaxRetries = &info.Retry.MaxRetries
		}
		if _, err := d.append("llm/retry", ev); err != nil {
			return reply, seqs, err
		}
		select {
		case <-time.After(llm.Duration(delay)):
		case <-ctx.Done():
			return reply, seqs, nil
		}
		if _, err := d.append("llm/retry-started", retryStartedData{RetryID: retryID, Turn: turn, Step: step, Retry: retry + 1}); err != nil {
			return reply, seqs, err
		}
	}
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
