package replay

import (
	"context"
	"encoding/json"

	"github.com/dshsim/dshsim/compaction"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline/session"
)

// SummaryRequest is a compaction's summary call: the compacted range's
// events (their messages, in surface order), then compaction.Instruction
// as the last user message; MaxTokens caps the reply.
type SummaryRequest struct {
	Events    []session.Event
	MaxTokens int
}

// compactionEngine is the agent's automatic compaction, made at its first
// failed call from the recording's composition (nil: none mounted).
func (d *driver) compactionEngine() *compaction.Engine {
	if d.calls.compactionMade {
		return d.calls.compaction
	}
	d.calls.compactionMade = true
	if cfg := d.rec.CompactionConfig(); cfg != nil {
		if p, err := compaction.Resolve(*cfg); err == nil { // the loader validated it
			d.calls.compaction = compaction.NewEngine(p).WithRoute(d.recordedRoute)
		}
		if pc := d.rec.Settings.ToolResultPruner; pc != nil && d.calls.compaction != nil {
			if pr, err := compaction.ResolvePruner(*pc); err == nil { // the loader validated it
				d.calls.compaction.WithPruner(pr)
			}
		}
	}
	return d.calls.compaction
}

// recoverOverflow is the composition's context-overflow recovery of a
// failed call (upstream's agent/request-error listener of
// dsh-compaction-basic): retry says to call the model again in the same
// step, after a compaction replaced the conversation's head. A
// compaction that did not help leaves the failure as it was (upstream
// logs a warning; the replay notes nothing).
func (d *driver) recoverOverflow(ctx context.Context, turn, step int, failure *session.Failure) (retry bool) {
	e := d.compactionEngine()
	if e == nil || failure == nil {
		return false
	}
	d.calls.at = [2]int{turn, step}
	var log compaction.Log = d.log
	if rp := d.recordedPressure(turn, step); rp.cwd != "" {
		rp.ws = spellings(d.ws)
		log = upstreamLog{d.log, rp}
	}
	retry, _ = e.Overflow(ctx, log, failure.Code, d.summarize(turn, step))
	return retry
}

// summarize makes a compaction's summary with a model call of the step
// (its chunks are not logged: upstream's summary call is the compaction's
// own, recorded in compaction/summary).
func (d *driver) summarize(turn, step int) compaction.Summarize {
	return func(ctx context.Context, in compaction.Input) (compaction.Summary, error) {
		a := newAssembler()
		emit := func(c json.RawMessage) error {
			a.push(c)
			return nil
		}
		req := ModelRequest{Turn: turn, Step: step, Log: d.log, System: d.system, Tools: d.surface.WireTools(),
			Summary: &SummaryRequest{Events: in.Events, MaxTokens: in.MaxTokens}}
		_, err := d.model.Call(ctx, req, emit)
		if msg, ok := isExhausted(err); ok {
			a.push(d.exhaust(msg))
		} else if err != nil {
			return compaction.Summary{}, err
		}
		blocks := a.blocks()
		out := compaction.Output{Blocks: make([]json.RawMessage, len(blocks)), Finish: a.finishKind(), Usage: a.usage}
		for i, b := range blocks {
			out.Blocks[i] = b.json
		}
		if out.Finish == llm.Error || out.Finish == llm.Aborted {
			out.Failure = a.finish.Failure
		}
		return compaction.SummaryOf(out, in.Target, in.MaxTokens)
	}
}
