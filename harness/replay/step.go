package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/compaction"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/toolschema"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
)

// modelCalls is what an agent's loop keeps of its model's calls: whether
// its first request was logged, whether the script ran out, and what the
// model was offered at that request (a child's sidecars are compared with
// it; mu guards those, read from other goroutines).
type modelCalls struct {
	headed    bool // the request header and context were logged
	exhausted bool // the script ran out (flagged once)

	// compaction recovers a call that overflowed the context window (nil:
	// the composition mounts none); made once (compactionMade).
	compaction     *compaction.Engine
	compactionMade bool
	// at is the turn and step the compaction runs for (its recorded
	// route is the one in force there).
	at [2]int

	mu          sync.Mutex
	offered     []pipeline.Tool
	sections    []stack.PromptSection
	sectionsErr error
}

// modelStep is a step's model work, as upstream's step: the request (the
// header and context on the session's first call, the title model's
// request after them), the model's reply streamed as assistant/chunk
// events, and then, by the finish: an error is retried as the model's retry
// policy allows (llm/retry, its delay, llm/retry-started, the next reply in
// the same step), or is recovered by a compaction when it overflowed the
// context window (recoverOverflow: the next reply in the same step), or
// fails the turn; else the assistant message (its text
// blocks go on the wire), and max-tokens ends the step, no tool call ends
// it completed, tool calls run and continue the turn (unless one concludes
// it). end is how the step ends the turn (nil: it continues; failed: the
// call failed); err is a failure of the replay.
func (d *driver) modelStep(ctx context.Context, turn, step int) (end *session.EndReason, err error) {
	info := d.model.Info()
	retryID, retries := "", 0
	for ; ; retries++ {
		if err := d.request(); err != nil {
			return nil, err
		}
		a, seqs, err := d.stream(ctx, turn, step)
		var refused errNotSerializable
		if errors.As(err, &refused) {
			return &session.EndReason{Kind: session.EndError, Error: &session.Failure{Message: refused.Error(), Code: "UNKNOWN"}}, nil
		}
		if err != nil || ctx.Err() != nil {
			return nil, err
		}
		if k := a.finishKind(); k == llm.Error || k == llm.Aborted {
			// The policy decides on what could be read of the failure, as
			// upstream's llm-retry reads it: a field of another type (a
			// string status or Retry-After) is none, and the rest counts.
			failure, _ := a.failure()
			if d.recoverOverflow(ctx, turn, step, failure) {
				retries-- // a compaction's retry is not the retry policy's
				continue
			}
			r := d.retryOf(info, turn, step, retries, failure)
			if r == nil {
				failure = thrownFailure(a.finish.Failure, failure)
				return &session.EndReason{Kind: session.EndError, Error: failure}, nil
			}
			if retryID == "" {
				retryID = newUUID()
			}
			r.RetryID = retryID
			if err := d.retryWait(ctx, r); err != nil || ctx.Err() != nil {
				return nil, err
			}
			continue
		}
		blocks := a.blocks()
		if err := d.assistantMessage(turn, step, blocks, a.usage, seqs, false); err != nil {
			return nil, err
		}
		if a.finishKind() == llm.MaxTokens {
			return &session.EndReason{Kind: session.EndMaxTokens}, nil
		}
		completed := &session.EndReason{Kind: session.EndCompleted}
		calls := toolCalls(blocks)
		if len(calls) == 0 {
			return completed, nil
		}
		if concludes, err := d.runCalls(ctx, turn, step, calls); err != nil || !concludes {
			return nil, err
		}
		return completed, nil
	}
}

// retryOf is the llm/retry event of a failed call the model's retry policy
// retries after previous retries of this step (nil: not retried).
func (d *driver) retryOf(info ModelInfo, turn, step, previous int, failure *session.Failure) *session.Retry {
	if info.Retry == nil {
		return nil
	}
	delay, ok := info.Retry.Decide(failure.Code, failure.ProviderRetryAfterMs, previous, mrand.Float64())
	if !ok {
		return nil
	}
	r := &session.Retry{Turn: turn, Step: step, Provider: info.Provider, Mode: info.Retry.Mode, PolicyKey: info.Retry.Key(),
		Retry: previous + 1, DelayMs: delay, Failure: failure}
	if info.Retry.Mode != llm.RetryAlways {
		r.MaxRetries = &info.Retry.MaxRetries
	}
	return r
}

// toolCalls are the tool-call blocks of an assembled message.
func toolCalls(blocks []replyBlock) []recording.ToolCall {
	var out []recording.ToolCall
	for _, b := range blocks {
		if b.Type == llm.ToolCall {
			out = append(out, recording.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments})
		}
	}
	return out
}

// retryWait logs llm/retry, waits its delay (the user's cancel ends the
// wait) and logs llm/retry-started.
func (d *driver) retryWait(ctx context.Context, r *session.Retry) error {
	if _, err := d.append(session.KindRetry, r); err != nil {
		return err
	}
	select {
	case <-time.After(llm.Duration(r.DelayMs)):
	case <-ctx.Done():
		return nil
	}
	_, err := d.append(session.KindRetryStarted, session.RetryStarted{RetryID: r.RetryID, Turn: r.Turn, Step: r.Step, Retry: r.Retry})
	return err
}

// request logs the agent's first request: its header (the model's config,
// the system prompt, our tools; reason "initial", or "resume" when the log
// already holds a header: a fork's copied turns, a resumed child's) and
// context (unless the log's last one names the same route), then the
// title model's request when one is due. What the model is offered then is
// kept for the sidecars' comparison.
func (d *driver) request() error {
	if d.calls.headed {
		return nil
	}
	d.calls.headed = true
	offered := d.surface.WireTools()
	sections, sectionsErr := d.surface.PromptSections()
	d.calls.mu.Lock()
	d.calls.offered, d.calls.sections, d.calls.sectionsErr = offered, sections, sectionsErr
	d.calls.mu.Unlock()
	events, err := d.log.Events()
	if err != nil {
		return err
	}
	info := d.model.Info()
	var h headerData
	h.Header.Config = info.Config
	h.Header.System = d.system
	h.Header.Tools = headerTools(offered)
	h.Reason = "initial"
	if _, ok := session.Last(events, session.KindRequestHeader); ok {
		h.Reason = "resume"
	}
	if _, err := d.append(session.KindRequestHeader, h); err != nil {
		return err
	}
	if !sameRoute(events, info) {
		if _, err := d.append(session.KindRequestContext, session.RequestContext{Provider: info.Provider, Model: info.Model}); err != nil {
			return err
		}
	}
	if r := d.titles.request(); r != nil {
		if _, err := d.append(session.KindTitleRequest, r); err != nil {
			return err
		}
	}
	return nil
}

// sameRoute reports whether the last request/context of events names the
// model's route (upstream logs the context on a route change only).
func sameRoute(events []session.Event, info ModelInfo) bool {
	last, ok := session.Last(events, session.KindRequestContext)
	if !ok {
		return false
	}
	var rc session.RequestContext
	return json.Unmarshal(last.Data, &rc) == nil && rc.Provider == info.Provider && rc.Model == info.Model
}

// headerTools lists the tools the model is offered (the agent's wire list:
// sorted by name, run_code alone in code mode), as upstream's header stores
// them ({name, description, parameters}).
func headerTools(defs []pipeline.Tool) []json.RawMessage {
	out := make([]json.RawMessage, len(defs))
	for i, t := range defs {
		out[i] = json.RawMessage(toolschema.Schema{Name: t.Name, Description: t.Description, Parameters: t.Parameters}.JSON())
	}
	return out
}

// stream asks the model for the step's reply, logging every chunk as an
// assistant/chunk event as it comes, and assembles it. A script that ran
// out is llm-replay's error, which upstream's LLM layer turns into an error
// finish chunk (code UNKNOWN; flagged). A stream the user cancelled keeps
// its interrupted message: the text it streamed so far.
func (d *driver) stream(ctx context.Context, turn, step int) (*assembler, []int64, error) {
	a := newAssembler()
	var seqs []int64
	emit := func(c json.RawMessage) error {
		v, err := jsjson.Parse(c) // a chunk is a JSON object, logged as it came
		if err != nil || v.Kind != jsjson.Object {
			return fmt.Errorf("the model's chunk is not a JSON object: %s", c)
		}
		if !jsjson.Lossless(v) {
			return errNotSerializable(session.KindAssistantChunk)
		}
		e, err := d.append(session.KindAssistantChunk, session.AssistantChunk{Turn: turn, Step: step, Chunk: c})
		if err == nil {
			seqs = append(seqs, e.Seq)
			a.push(c)
		}
		return err
	}
	req := ModelRequest{Turn: turn, Step: step, Log: d.log, System: d.system, Tools: d.surface.WireTools()}
	_, err := d.model.Call(ctx, req, emit)
	if msg, ok := isExhausted(err); ok {
		return a, seqs, emit(d.exhaust(msg))
	}
	if err != nil {
		return nil, nil, err
	}
	if ctx.Err() != nil {
		if blocks := a.interrupted(); len(blocks) > 0 {
			return a, seqs, d.assistantMessage(turn, step, blocks, a.usage, seqs, true)
		}
	}
	return a, seqs, nil
}

// errNotSerializable is upstream's log refusing an event whose data is not
// lossless JSON (a number that is not finite, or -0: a chunk whose
// providerRetryAfterMs is 1e999); the turn fails with it, code UNKNOWN, as
// upstream's loop ends a turn on a throw that is not the model's.
type errNotSerializable string

func (e errNotSerializable) Error() string {
	return fmt.Sprintf("session event %q carries non-JSON-serializable data", string(e))
}

// thrownFailure is the failure a turn fails with when upstream's loop
// throws an error finish (one not retried) as an LlmError: the
// constructor's refusal (llmErrorProblem, code UNKNOWN), else the failure
// of its five fields alone, in its order (keys of the model's own are
// dropped). Without a failure object, read stays as it is.
func thrownFailure(reported json.RawMessage, read *session.Failure) *session.Failure {
	if problem := llmErrorProblem(reported); problem != "" {
		return &session.Failure{Message: problem, Code: "UNKNOWN"}
	}
	v, err := jsjson.Parse(reported)
	if err != nil || v.Kind != jsjson.Object {
		return read
	}
	var b strings.Builder
	b.WriteByte('{')
	for _, k := range []string{"message", "code", "status", "providerRetryAfterMs", "requestId"} {
		if f := v.Get(k); f != nil {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(jsjson.Quote(k) + ":" + jsjson.Stringify(f))
		}
	}
	b.WriteByte('}')
	f, _ := session.ReportedFailure(json.RawMessage(b.String()))
	return f
}

// llmErrorProblem is what upstream's LlmError constructor refuses in a
// failure the loop throws (one not retried): a message or code that is not
// a non-empty string, a status that is not an integer from 100 to 599, a
// providerRetryAfterMs that is not a positive finite number, a requestId
// that is not a non-empty string, each checked only when present (null
// is present), in that order; the turn then fails with that text, code
// UNKNOWN ("": none). Pure.
func llmErrorProblem(reported json.RawMessage) string {
	if !isObject(reported) {
		return "" // no failure object: upstream's loop fails reading it
	}
	v, err := jsjson.Parse(reported)
	if err != nil || v.Kind != jsjson.Object {
		return ""
	}
	nonEmpty := func(f *jsjson.Value) bool { return f != nil && f.Kind == jsjson.String && f.Str() != "" }
	switch status, after, id := v.Get("status"), v.Get("providerRetryAfterMs"), v.Get("requestId"); {
	case !nonEmpty(v.Get("message")):
		return "LlmError message must be a non-empty string"
	case !nonEmpty(v.Get("code")):
		return "LlmError code must be a non-empty string"
	case status != nil && (status.Kind != jsjson.Number || status.Num != math.Trunc(status.Num) || status.Num < 100 || status.Num > 599):
		return "LlmError status must be an integer from 100 through 599"
	case after != nil && (after.Kind != jsjson.Number || math.IsInf(after.Num, 0) || math.IsNaN(after.Num) || after.Num <= 0):
		return "LlmError providerRetryAfterMs must be a positive finite number"
	case id != nil && !nonEmpty(id):
		return "LlmError requestId must be a non-empty string"
	}
	return ""
}

// assistantMessage logs the assembled message (interrupted: a cancelled
// stream's) and sends its text blocks on the wire.
func (d *driver) assistantMessage(turn, step int, blocks []replyBlock, usage json.RawMessage, seqs []int64, interrupted bool) error {
	content := make([]json.RawMessage, len(blocks))
	for i, b := range blocks {
		content[i] = b.json
	}
	info := d.model.Info()
	body := session.AssistantBody{Role: "assistant", Content: content, Source: session.ModelSource{Kind: "model", Provider: info.Provider, Model: info.Model}, ID: newUUID()}
	data := session.AssistantMessage{Turn: turn, Step: step, Message: body, Usage: usage, Interrupted: interrupted}
	if _, err := d.appendWith(session.KindAssistantMessage, data, session.AppendOptions{SourceEventSeqs: seqs, SurfaceOp: "append"}); err != nil {
		return err
	}
	d.wire.assistantMessage(blocks)
	return nil
}

// exhaust is the failure chunk of a model call past the end of the script,
// flagged the first time.
func (d *driver) exhaust(msg string) json.RawMessage {
	if !d.calls.exhausted {
		d.flag("script exhausted: " + msg)
		d.calls.exhausted = true
	}
	return failureChunk(&llm.Failure{Message: msg, Code: "UNKNOWN"})
}

// failureChunk is the error finish chunk of failure f, as upstream's LLM
// layer makes it of a failed or thrown stream.
func failureChunk(f *llm.Failure) json.RawMessage {
	c, _ := llm.Chunk{Type: llm.FinishChunk, Reason: &llm.Finish{Kind: llm.Error, Failure: f}}.MarshalJSON()
	return c
}

// concurrencySafe reports whether the call may run in a pool (the stack's
// tools, and those of the agent's own scope: a child's report): a
// concurrency-safe tool given arguments its schema accepts.
func (d *driver) concurrencySafe(tc recording.ToolCall) bool {
	for _, t := range slices.Concat(d.stack.Definitions(), d.surface.WireTools()) {
		if t.Name == tc.Name {
			return pipeline.RunsBeside(t, pipeline.ParseArguments(tc.Arguments))
		}
	}
	return false
}

// runCalls runs a step's calls as upstream's scheduler does (each call's
// arguments read from the model's text as upstream's loop reads them,
// [pipeline.ParseArguments]): an exclusive
// call alone (tool/call, then its result; a call whose arguments its schema
// refuses is exclusive), consecutive concurrency-safe calls as one pool (all their tool/call events, then the results in model order).
// A call reached after the prompt was cancelled still gets its tool/call and
// is answered before dispatch (the pipeline never runs it). A result's
// context messages are staged for the next step right after it, and a
// successful file tool's path is noted for the workspace instructions.
func (d *driver) runCalls(ctx context.Context, turn, step int, calls []recording.ToolCall) (concludes bool, err error) {
	for i := 0; i < len(calls); {
		j := i + 1
		if d.concurrencySafe(calls[i]) {
			for j < len(calls) && j-i < maxParallelToolCalls && d.concurrencySafe(calls[j]) {
				j++
			}
		}
		pool := calls[i:j]
		seqs := make([]int64, len(pool))
		for k, tc := range pool {
			e, err := d.append(session.KindToolCall, session.ToolCall{Turn: turn, Step: step, CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			if err != nil {
				return false, err
			}
			seqs[k] = e.Seq
			if err := d.compactAt(tc); err != nil {
				return false, err
			}
		}
		if slices.ContainsFunc(pool, func(tc recording.ToolCall) bool {
			return d.stack.Yields(tc.Name, pipeline.ParseArguments(tc.Arguments))
		}) {
			d.yield() // the calls await I/O: a background child started before may step
		}
		results := make([]pipeline.Result, len(pool))
		var wg sync.WaitGroup
		for k, tc := range pool {
			wg.Go(func() { results[k] = d.surface.Execute(ctx, tc.ID, tc.Name, pipeline.ParseArguments(tc.Arguments)) })
		}
		wg.Wait()
		for k, tc := range pool {
			r := results[k]
			concludes = concludes || r.ConcludesTurn
			if err := d.toolResult(turn, step, tc, seqs[k], r); err != nil {
				return false, err
			}
			if d.instr != nil && ctx.Err() == nil {
				d.instr.toolResult(tc, r)
			}
		}
		i = j
	}
	return concludes, nil
}

// toolResult logs one call's tool/result and stages its context messages.
func (d *driver) toolResult(turn, step int, tc recording.ToolCall, callSeq int64, r pipeline.Result) error {
	var facts json.RawMessage
	if f := sandbox.FactsOf(r.Sandbox); f != nil {
		facts, _ = json.Marshal(f)
	}
	data := pipeline.NewToolResultEvent(turn, step, tc.ID, newUUID(), r, facts)
	if _, err := d.appendWith(session.KindToolResult, data, session.AppendOptions{SourceEventSeqs: []int64{callSeq}, SurfaceOp: "append"}); err != nil {
		return err
	}
	return d.inbox.stage(r.ContextMessages)
}
