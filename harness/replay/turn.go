package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
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
)

// abortReason is the turn/end reason of a turn whose context ended.
func abortReason(ctx context.Context) map[string]any {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errUserCancel):
		return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "user"}}
	case errors.Is(cause, errParentCancel):
		return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "parent"}}
	default:
		return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "replay-stopped", "error": cause.Error()}}
	}
}

// checkpointFailure is the turn/end reason of a turn a non-model failure
// ended (upstream's {message: <error chain>, code: UNKNOWN}).
func checkpointFailure(err error) map[string]any {
	return map[string]any{"kind": "error", "error": map[string]any{"message": err.Error(), "code": "UNKNOWN"}}
}

// openedTurn is a turn that started: its number, the next-turn message it
// claimed (nil: a turn for steered messages only), and what the next-step
// inbox carried into it.
type openedTurn struct {
	turn    int
	msg     *userMessage
	carried []userMessage
}

// runTurn runs one turn: turn/start, the claims (the next-step inbox, then
// one next-turn message), then steps until the model stops and nothing
// more was queued for a next step. It returns the turn's number.
func (a *agent) runTurn(pre *preopened) (int, error) {
	var ctx context.Context
	var cancel context.CancelCauseFunc
	var t *openedTurn
	var err error
	if pre != nil {
		ctx, cancel, t, err = pre.ctx, pre.cancel, pre.turn, pre.err
	} else {
		ctx, cancel = context.WithCancelCause(a.base)
		t, err = a.openTurn(cancel)
	}
	defer cancel(nil)
	if err != nil {
		return 0, err
	}
	// A held child (holdUntilYield) enters its first step once released.
	a.waitUntil(ctx, func() bool { return a.held == 0 })
	claimed := t.carried
	for step := 1; ; step++ {
		if ctx.Err() != nil {
			return t.turn, a.endTurn(t.turn, abortReason(ctx))
		}
		if a.hooks.preStep != nil {
			if err := a.hooks.preStep(ctx, a, t.turn, step); err != nil {
				if ctx.Err() != nil {
					return t.turn, a.endTurn(t.turn, abortReason(ctx))
				}
				return t.turn, a.endTurn(t.turn, checkpointFailure(err))
			}
		}
		if err := a.surface.PreStep(); err != nil {
			return t.turn, err
		}
		end, more, err := a.step(ctx, t, step, claimed)
		if err != nil || end != nil {
			if err == nil {
				err = a.endTurn(t.turn, end)
			}
			return t.turn, err
		}
		if !more.next {
			return t.turn, a.endTurn(t.turn, map[string]any{"kind": more.kind})
		}
		claimed = more.claimed
	}
}

// stepOutcome is what follows a step that did not end its turn.
type stepOutcome struct {
	next    bool          // another step follows
	claimed []userMessage // what the next-step inbox carried into it
	kind    string        // the turn's end kind when none follows
}

// step runs step number step of turn t: its model call and tool calls.
// end is set when the turn ends with this step.
func (a *agent) step(ctx context.Context, t *openedTurn, step int, claimed []userMessage) (end map[string]any, out stepOutcome, err error) {
	if err := a.openStep(ctx, t, step, claimed); err != nil {
		return nil, out, err
	}
	end, calls, finish, err := a.modelCall(ctx, t.turn, step)
	if err != nil {
		return nil, out, err
	}
	if end != nil {
		if _, err := a.append("step/end", stepData{t.turn, step}); err != nil {
			return nil, out, err
		}
		return end, out, nil
	}
	concludes, err := a.runCalls(ctx, t.turn, step, calls)
	if err != nil {
		return nil, out, err
	}
	if _, err := a.append("step/end", stepData{t.turn, step}); err != nil {
		return nil, out, err
	}
	if ctx.Err() != nil {
		return abortReason(ctx), out, nil // no claim: the next turn's start claims the inbox
	}
	if out.claimed, err = a.inbox.afterStep(); err != nil {
		return nil, out, err
	}
	out.next = len(calls) > 0 && !concludes || len(out.claimed) > 0 // a claimed notice keeps the turn open for one more step
	out.kind = "completed"
	if finish == "max-tokens" {
		out.kind = "max-tokens"
	}
	return nil, out, nil
}

// openTurn starts a turn: turn/start, then the claims: the next-step inbox
// first (what an aborted turn left there, a hook's context on a cancelled
// run_code, a steered report), then one queued next-turn message.
func (a *agent) openTurn(cancel context.CancelCauseFunc) (*openedTurn, error) {
	a.gate.Pump() // the agent woke: the host yielded
	a.mu.Lock()
	a.turnNo++
	t := &openedTurn{turn: a.turnNo}
	a.turnCancel = cancel
	a.mu.Unlock()
	if _, err := a.append("turn/start", turnData{t.turn}); err != nil {
		return nil, err
	}
	carried, err := a.inbox.afterStep()
	if err != nil {
		return nil, err
	}
	t.carried = carried
	a.mu.Lock()
	if len(a.nextTurn) > 0 {
		m := a.nextTurn[0]
		a.nextTurn = a.nextTurn[1:]
		t.msg = &m
		a.claimedBy[m.ID] = t.turn
	}
	a.cond.Broadcast()
	a.mu.Unlock()
	if t.msg != nil {
		one := 1
		if _, err := a.append("agent/inbox/spliced", splice{Target: "next-turn", Start: 0, RemovedCount: &one, Inserted: []userMessage{}}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// openStep starts a step of turn t: step/start, the messages the model gets
// new (on the first step what the inbox carried and the claimed message;
// then what the last step claimed), the runtime context, and the first
// request's title and header.
func (a *agent) openStep(ctx context.Context, t *openedTurn, step int, claimed []userMessage) error {
	if _, err := a.append("step/start", stepData{t.turn, step}); err != nil {
		return err
	}
	var promptSeq int64 = -1
	if err := a.appendMessages(claimed); err != nil {
		return err
	}
	if step == 1 && t.msg != nil {
		e, err := a.appendWith("user/message", *t.msg, session.AppendOptions{SurfaceOp: "append"})
		if err != nil {
			return err
		}
		promptSeq = e.Seq
	}
	if _, err := a.surface.SyncContext(ctx); err != nil {
		return fmt.Errorf("runtime context: %w", err)
	}
	if c, ok := a.surface.(catalogSyncer); ok { // the session's skill catalog
		if _, err := c.SyncCatalog(ctx); err != nil {
			return fmt.Errorf("skill catalog: %w", err)
		}
	}
	return a.firstRequest(t.msg, promptSeq)
}

// catalogSyncer is a surface that keeps a skill catalog (the session's).
type catalogSyncer interface {
	SyncCatalog(ctx context.Context) (*session.Event, error)
}

// endTurn writes turn/end with reason and records it.
func (a *agent) endTurn(turn int, reason map[string]any) error {
	_, err := a.append("turn/end", turnEndData{Turn: turn, Reason: reason})
	a.mu.Lock()
	a.ended[turn] = reason
	a.cond.Broadcast()
	a.mu.Unlock()
	return err
}

// firstRequest writes the session title of the first user prompt, and the
// request header and context of the agent's first model request: the
// header's reason is "initial", or "resume" when the log already holds a
// header (a fork's copied turns, a resumed child), and the context is
// logged unless the log's last one names the same route.
func (a *agent) firstRequest(msg *userMessage, promptSeq int64) error {
	if !a.titled && msg != nil && promptSeq >= 0 && isUserPrompt(msg) {
		a.titled = true
		if _, err := a.append("session/title", titleData{Title: fallbackTitle(messageText(msg)), MessageSeqs: []int64{promptSeq}, Source: kindOnly{"fallback"}}); err != nil {
			return err
		}
	}
	if a.headed {
		return nil
	}
	a.headed = true
	a.mu.Lock()
	a.offered = a.surface.WireTools()
	a.sections, a.sectionsErr = a.surface.PromptSections()
	a.mu.Unlock()
	events, err := a.log.Events()
	if err != nil {
		return err
	}
	info := a.model.Info()
	var h headerData
	h.Header.Config = info.Config
	h.Header.System = a.system
	h.Header.Tools = a.headerTools()
	h.Reason = "initial"
	if _, ok := session.Last(events, "request/header"); ok {
		h.Reason = "resume"
	}
	if _, err := a.append("request/header", h); err != nil {
		return err
	}
	if last, ok := session.Last(events, "request/context"); ok {
		var rc requestContext
		if json.Unmarshal(last.Data, &rc) == nil && rc.Provider == info.Provider && rc.Model == info.Model {
			return nil
		}
	}
	_, err = a.append("request/context", requestContext{Provider: info.Provider, Model: info.Model})
	return err
}

// isUserPrompt reports whether msg is a user's prompt (only the first one
// gets a fallback title).
func isUserPrompt(msg *userMessage) bool {
	k, ok := msg.Source.(kindOnly)
	return ok && k.Kind == "user" || sourceKind(msg.Source) == "user"
}

// sourceKind is the kind of a message source of any shape.
func sourceKind(source any) string {
	raw, err := json.Marshal(source)
	if err != nil {
		return ""
	}
	var k kindOnly
	json.Unmarshal(raw, &k)
	return k.Kind
}

// messageText is the text of a message's text blocks.
func messageText(m *userMessage) string {
	raw, _ := json.Marshal(m.Content)
	var bs []struct {
		Type, Text string
	}
	json.Unmarshal(raw, &bs)
	var b strings.Builder
	for _, x := range bs {
		if x.Type == "text" {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

// headerTools lists the tools the model is offered (the surface's wire
// list: sorted by name, run_code alone in code mode), as upstream's header
// stores them ({name, description, parameters}).
func (a *agent) headerTools() []any {
	defs := a.surface.WireTools()
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
func (a *agent) modelCall(ctx context.Context, turn, step int) (end map[string]any, calls []recording.ToolCall, finish string, err error) {
	reply, seqs, err := a.callModel(ctx, turn, step)
	if msg, ok := isExhausted(err); ok {
		return a.exhaust(msg), nil, "", nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	info := a.model.Info()
	body := assistantBody{Role: "assistant", Source: modelSource{Kind: "model", Provider: info.Provider, Model: info.Model}, ID: newUUID()}
	data := assistantData{Turn: turn, Step: step}
	msgOpts := session.AppendOptions{SourceEventSeqs: seqs, SurfaceOp: "append"}
	switch {
	case reply.Hang != nil:
		body.Content = []any{textBlock{"text", "partial"}}
		data.Message, data.Interrupted = body, true
		if _, err := a.appendWith("assistant/message", data, msgOpts); err != nil {
			return nil, nil, "", err
		}
		a.wire.send(acpwire.AgentText("partial"))
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
	if _, err := a.appendWith("assistant/message", data, msgOpts); err != nil {
		return nil, nil, "", err
	}
	for _, b := range reply.Blocks {
		if b.Type == "text" {
			a.wire.send(acpwire.AgentText(b.Text))
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
func (a *agent) exhaust(msg string) map[string]any {
	a.mu.Lock()
	first := !a.exhausted
	a.exhausted = true
	a.mu.Unlock()
	if first {
		a.flag("script exhausted: " + msg)
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
func (a *agent) callModel(ctx context.Context, turn, step int) (reply recording.Reply, seqs []int64, err error) {
	info := a.model.Info()
	req := ModelRequest{Turn: turn, Step: step, Log: a.log, System: a.system, Tools: a.surface.WireTools()}
	var retryID string
	for retry := 0; ; retry++ {
		seqs = nil
		emit := func(c json.RawMessage) error {
			e, err := a.append("assistant/chunk", chunkData{Turn: turn, Step: step, Chunk: c})
			seqs = append(seqs, e.Seq)
			return err
		}
		reply, err = a.model.Call(ctx, req, emit)
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
		if _, err := a.append("llm/retry", ev); err != nil {
			return reply, seqs, err
		}
		select {
		case <-time.After(llm.Duration(delay)):
		case <-ctx.Done():
			return reply, seqs, nil
		}
		if _, err := a.append("llm/retry-started", retryStartedData{RetryID: retryID, Turn: turn, Step: step, Retry: retry + 1}); err != nil {
			return reply, seqs, err
		}
	}
}

// runCalls runs a step's calls as upstream's scheduler does: an exclusive
// call alone (tool/call, then its result), consecutive concurrency-safe calls
// as one pool (all their tool/call events, then the results in model order).
// A call reached after the prompt was cancelled still gets its tool/call and
// is answered before dispatch (the pipeline never runs it).
func (a *agent) runCalls(ctx context.Context, turn, step int, calls []recording.ToolCall) (concludes bool, err error) {
	for i := 0; i < len(calls); {
		j := i + 1
		if stack.ConcurrencySafe(a.surface, calls[i].Name) {
			for j < len(calls) && j-i < maxParallelToolCalls && stack.ConcurrencySafe(a.surface, calls[j].Name) {
				j++
			}
		}
		c, err := a.runPool(ctx, turn, step, calls[i:j])
		if err != nil {
			return false, err
		}
		concludes = concludes || c
		i = j
	}
	return concludes, nil
}

// runPool runs one pool of calls: every tool/call, the calls in parallel,
// then every tool/result in model order.
func (a *agent) runPool(ctx context.Context, turn, step int, pool []recording.ToolCall) (concludes bool, err error) {
	seqs := make([]int64, len(pool))
	for k, tc := range pool {
		e, err := a.append("tool/call", toolCallData{Turn: turn, Step: step, CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		if err != nil {
			return false, err
		}
		seqs[k] = e.Seq
	}
	for _, tc := range pool {
		if stack.Yields(tc.Name, json.RawMessage(tc.Arguments)) {
			a.yield()
			break
		}
	}
	results := make([]pipeline.Result, len(pool))
	var wg sync.WaitGroup
	for k, tc := range pool {
		wg.Go(func() { results[k] = a.execute(ctx, tc.ID, tc.Name, json.RawMessage(tc.Arguments)) })
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
		if _, err := a.appendWith("tool/result", data, session.AppendOptions{SourceEventSeqs: []int64{seqs[k]}, SurfaceOp: "append"}); err != nil {
			return false, err
		}
		if err := a.inbox.stage(r.ContextMessages); err != nil {
			return false, err
		}
	}
	return concludes, nil
}
