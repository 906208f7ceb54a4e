package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/dshsim/dshsim/compaction"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline/session"
)

// pressureCompaction is the composition's between-step compaction
// (upstream's agent/pre-step listener of dsh-compaction-basic): before the
// step, a session whose next request is priced at its policy's threshold
// is compacted; then the inner listeners decide the step. What the check
// reads that the replay's own log does not hold comes from the recording
// ([recordedPressure]); an input it cannot know fails the replay. A
// compaction that did not help, or a policy with no spec for the route,
// goes on as upstream's warning does (the replay notes nothing).
func (d *driver) pressureCompaction(ctx context.Context, ps *preStepInfo, next func() (stepDecision, error)) (stepDecision, error) {
	e := d.compactionEngine()
	if e == nil || ctx.Err() != nil {
		return next()
	}
	d.calls.at = [2]int{ps.turn, ps.step}
	rp := recordedPressure{rec: d.rec, turn: ps.turn, step: ps.step}
	if _, _, err := e.Pressure(ctx, d.log, rp.inputs(), d.summarize(ps.turn, ps.step)); err != nil {
		return stepDecision{}, fmt.Errorf("pressure compaction before turn %d step %d: %w", ps.turn, ps.step, err)
	}
	return next()
}

// recordedRoute is the route the compaction's policy is chosen by: the
// recorded request header in force at the driver's current step (the
// replay's own header names its constructed model), else the log's own.
func (d *driver) recordedRoute(events []session.Event) (compaction.Target, bool) {
	rp := recordedPressure{rec: d.rec, turn: d.calls.at[0], step: d.calls.at[1]}
	if h, ok := rp.headerBefore(rp.point()); ok {
		if t, ok := routeOf(h); ok {
			return t, true
		}
	}
	return compaction.RoutedTarget(events)
}

// recordedPressure reads a pressure check's inputs at the pre-step of
// (turn, step) from the recording: the request envelopes upstream priced
// (its request/header events) and the routed model's context window (its
// request/context events).
type recordedPressure struct {
	rec        *recording.Recording
	turn, step int
}

func (rp recordedPressure) inputs() compaction.Inputs {
	return compaction.Inputs{Measure: rp.measure, Window: rp.window}
}

// index is the index in the recording of the first event of kind for
// (turn, step) (-1: none).
func (rp recordedPressure) index(kind string, turn, step int) int {
	for i, e := range rp.rec.Events {
		if e.Type != kind {
			continue
		}
		var s session.Step
		if json.Unmarshal(e.Data, &s) == nil && s.Turn == turn && (kind == session.KindTurnEnd || s.Step == step) {
			return i
		}
	}
	return -1
}

// point is where the pre-step of (turn, step) stands in the recording:
// before its step/start, else before its turn's end, else at the end.
func (rp recordedPressure) point() int {
	if i := rp.index(session.KindStepStart, rp.turn, rp.step); i >= 0 {
		return i
	}
	if i := rp.index(session.KindTurnEnd, rp.turn, 0); i >= 0 {
		return i
	}
	return len(rp.rec.Events)
}

// headerBefore is the recording's last request/header before index limit.
func (rp recordedPressure) headerBefore(limit int) (recording.Event, bool) {
	for i := min(limit, len(rp.rec.Events)) - 1; i >= 0; i-- {
		if e := rp.rec.Events[i]; e.Type == session.KindRequestHeader {
			return e, true
		}
	}
	return recording.Event{}, false
}

// routeOf is a request/header's route.
func routeOf(h recording.Event) (compaction.Target, bool) {
	return compaction.RoutedTarget([]session.Event{{Type: h.Type, Seq: h.Seq, Data: h.Data}})
}

// stepHeader is the header in force for step (turn, step)'s request: the
// last recorded before that step's end (else before the pre-step point).
func (rp recordedPressure) stepHeader(turn, step int) (recording.Event, bool) {
	limit := rp.index(session.KindStepEnd, turn, step)
	if limit < 0 {
		limit = recordedPressure{rec: rp.rec, turn: turn, step: step}.point()
	}
	return rp.headerBefore(limit)
}

// measure prices the log's next request as upstream's meter did: the
// log's own request headers (which name the replay's model and no system
// prompt) give way to the recorded header of each step, placed after its
// step/start. A recorded header scrubbed to a placeholder cannot be
// priced: an error naming its line.
func (rp recordedPressure) measure(log compaction.Log) (compaction.Measurement, error) {
	events, err := log.Events()
	if err != nil {
		return compaction.Measurement{}, err
	}
	var out []session.Event
	for _, e := range events {
		if e.Type == session.KindRequestHeader {
			continue
		}
		out = append(out, e)
		var s session.Step
		if e.Type != session.KindStepStart || json.Unmarshal(e.Data, &s) != nil {
			continue
		}
		h, ok := rp.stepHeader(s.Turn, s.Step)
		if !ok {
			continue
		}
		if err := rp.priceable(h); err != nil {
			return compaction.Measurement{}, err
		}
		out = append(out, session.Event{Type: h.Type, Seq: e.Seq, Data: h.Data})
	}
	return compaction.Measure(out)
}

// normalised matches a token a recording's normaliser writes in place of
// a value ({{system}}, {{tools}}, {{cwd}}, {{sessionId}},
// {{spillLocator:name}}, ...): text whose length upstream priced is gone.
var normalised = regexp.MustCompile(`\{\{[A-Za-z][\w-]*(:[^{}]*)?\}\}`)

// priceable refuses a recorded header whose system prompt or tool schemas
// hold a normaliser's token (scrubbed to {{system}} or {{tools}}, or a
// path written {{cwd}}): the price upstream computed is not the recorded
// text's.
func (rp recordedPressure) priceable(h recording.Event) error {
	var d struct {
		Header struct {
			System json.RawMessage `json:"system"`
			Tools  json.RawMessage `json:"tools"`
		} `json:"header"`
	}
	if err := json.Unmarshal(h.Data, &d); err != nil {
		return fmt.Errorf("%s line %d: request/header: %w", rp.rec.LogFile, h.Line, err)
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"system", d.Header.System}, {"tools", d.Header.Tools}} {
		if tok := normalised.Find(f.raw); tok != nil {
			return fmt.Errorf("%s line %d: request/header's %s holds the normalised token %s: the pressure check prices the request's %s as upstream sent it, which the replay cannot know",
				rp.rec.LogFile, h.Line, f.name, tok, f.name)
		}
	}
	return nil
}

// window is the recorded context window of route: its last request/context
// before the pre-step point (none logged: an error naming the route).
func (rp recordedPressure) window(route compaction.Target) (int, bool, error) {
	for i := min(rp.point(), len(rp.rec.Events)) - 1; i >= 0; i-- {
		e := rp.rec.Events[i]
		if e.Type != session.KindRequestContext {
			continue
		}
		var c struct {
			Provider, Model string
			ContextWindow   *int `json:"contextWindow"`
		}
		if err := json.Unmarshal(e.Data, &c); err != nil {
			return 0, false, fmt.Errorf("%s line %d: request/context: %w", rp.rec.LogFile, e.Line, err)
		}
		if c.Provider != route.Provider || c.Model != route.Model {
			continue
		}
		if c.ContextWindow == nil {
			return 0, false, nil
		}
		return *c.ContextWindow, true, nil
	}
	return 0, false, fmt.Errorf("%s: no request/context for %s/%s before turn %d step %d: the context window the pressure check scales to is unknown",
		rp.rec.LogFile, route.Provider, route.Model, rp.turn, rp.step)
}
