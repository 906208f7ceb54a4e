package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

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
	rp := d.recordedPressure(ps.turn, ps.step)
	rp.ws = spellings(d.ws)
	var log compaction.Log = d.log
	if rp.cwd != "" {
		log = upstreamLog{d.log, rp}
	}
	if _, _, err := e.Pressure(ctx, log, rp.inputs(), d.summarize(ps.turn, ps.step)); err != nil {
		return stepDecision{}, fmt.Errorf("pressure compaction before turn %d step %d: %w", ps.turn, ps.step, err)
	}
	return next()
}

// upstreamLog is the replay's log as the compaction reads it when
// upstream's workspace path is known: each message's text as upstream's
// held it (upstreamText), so that the ranges it selects and the prices it
// records (shadowedTokenCount) are upstream's. What it appends is the
// replay's.
type upstreamLog struct {
	*session.Log
	rp recordedPressure
}

// Events are the log's events, each message's text as upstream's held it.
func (l upstreamLog) Events() ([]session.Event, error) {
	events, err := l.Log.Events()
	out := make([]session.Event, len(events))
	for i, e := range events {
		out[i] = l.rp.upstreamText(e, l.rp.cwd)
	}
	return out, err
}

// recordedRoute is the route the compaction's policy is chosen by: the
// recorded request header in force at the driver's current step (the
// replay's own header names its constructed model), else the log's own.
func (d *driver) recordedRoute(events []session.Event) (compaction.Target, bool) {
	rp := d.recordedPressure(d.calls.at[0], d.calls.at[1])
	if h, ok := rp.headerBefore(rp.point()); ok {
		if t, ok := routeOf(h); ok {
			return t, true
		}
	}
	return compaction.RoutedTarget(events)
}

// recordedLog is the recorded log an agent's pressure check reads: the
// session's, or the recorded child its child is bound to.
type recordedLog struct {
	file   string
	events []recording.Event
}

// recordedPressure is the pressure check's reader at the pre-step of
// (turn, step): a child's reads its bound recorded log (bound to none:
// no events, and the file names the child).
func (d *driver) recordedPressure(turn, step int) recordedPressure {
	rl := recordedLog{d.rec.LogFile, d.rec.Events}
	if d.recorded != nil {
		var ok bool
		if rl, ok = d.recorded(); !ok {
			rl = recordedLog{file: d.label + " (bound to no recorded log)"}
		}
	}
	return recordedPressure{recordedLog: rl, cwd: d.rec.Settings.UpstreamCwd, turn: turn, step: step}
}

// recordedPressure reads a pressure check's inputs at the pre-step of
// (turn, step) from a recorded log: the request envelopes upstream priced
// (its request/header events) and the routed model's context window (its
// request/context events).
type recordedPressure struct {
	recordedLog
	// cwd is the setting upstreamCwd ("": unknown).
	cwd        string
	turn, step int
	// ws are the spellings of the replay's workspace path, which a
	// message of the replay's log holds where upstream's held its own.
	ws []string
}

// spellings are a path and its symlink-resolved spelling (longest first).
func spellings(ws string) []string {
	if ws == "" {
		return nil
	}
	out := []string{ws}
	if real, err := filepath.EvalSymlinks(ws); err == nil && real != ws {
		out = append(out, real)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// jsonText is s as it stands inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func (rp recordedPressure) inputs() compaction.Inputs {
	return compaction.Inputs{Measure: rp.measure, Window: rp.window}
}

// index is the index in the recording of the first event of kind for
// (turn, step) (-1: none).
func (rp recordedPressure) index(kind string, turn, step int) int {
	for i, e := range rp.events {
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
	return len(rp.events)
}

// headerBefore is the recording's last request/header before index limit.
func (rp recordedPressure) headerBefore(limit int) (recording.Event, bool) {
	for i := min(limit, len(rp.events)) - 1; i >= 0; i-- {
		if e := rp.events[i]; e.Type == session.KindRequestHeader {
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
		limit = recordedPressure{recordedLog: rp.recordedLog, turn: turn, step: step}.point()
	}
	return rp.headerBefore(limit)
}

// maxPath is the longest path Linux resolves (PATH_MAX less its NUL), in
// bytes; each byte is priced at most 6 UTF-16 units (a JSON \u escape).
const maxPath = 4095

// measure prices the log's next request as upstream's meter did (see
// measureAs). The path upstream ran in is upstreamCwd; without it, the
// request is priced with the shortest path ("/") and the longest
// (maxPath bytes each priced as an escape), and the measure is exact only
// when both agree. A recorded header scrubbed to a placeholder leaves the
// envelope unbounded: the surface alone is the least.
func (rp recordedPressure) measure(log compaction.Log) (compaction.Measurement, error) {
	if c := rp.cwd; c != "" {
		return rp.measureAs(log, c)
	}
	lo, err := rp.measureAs(log, "/")
	if err != nil || lo.Unknown != "" {
		return lo, err
	}
	hi, err := rp.measureAs(log, strings.Repeat("x", 6*maxPath))
	if err != nil || hi.Unknown != "" || hi.TotalTokens == lo.TotalTokens {
		return lo, err
	}
	lo.Unknown, lo.Upper = "the workspace path upstream ran in (written {{cwd}}; the setting upstreamCwd states it)", hi.TotalTokens
	return lo, nil
}

// measureAs prices the log's next request with cwd as upstream's
// workspace path: the log's own request headers (which name the replay's
// model and no system prompt) give way to the recorded header of each
// step, placed after its step/start, its {{cwd}} written cwd; the replay's
// workspace path in a message of its log is written cwd too.
func (rp recordedPressure) measureAs(log compaction.Log, cwd string) (compaction.Measurement, error) {
	events, err := log.Events()
	if err != nil {
		return compaction.Measurement{}, err
	}
	var out []session.Event
	scrubbed := ""
	for _, e := range events {
		if e.Type == session.KindRequestHeader {
			continue
		}
		out = append(out, rp.upstreamText(e, cwd))
		var s session.Step
		if e.Type != session.KindStepStart || json.Unmarshal(e.Data, &s) != nil {
			continue
		}
		h, ok := rp.stepHeader(s.Turn, s.Step)
		if !ok {
			continue
		}
		data := json.RawMessage(strings.ReplaceAll(string(h.Data), "{{cwd}}", jsonText(cwd)))
		if scrubbed == "" {
			if scrubbed, err = rp.scrubbed(h, data); err != nil {
				return compaction.Measurement{}, err
			}
		}
		out = append(out, session.Event{Type: h.Type, Seq: e.Seq, Data: data})
	}
	m, err := compaction.Measure(out)
	if err != nil || scrubbed == "" {
		return m, err
	}
	m.TotalTokens, m.Unknown, m.Upper = m.SurfaceTokens, scrubbed, math.MaxInt
	return m, nil
}

// normalised matches a token a recording's normaliser writes in place of
// a value ({{system}}, {{tools}}, {{sessionId}}, {{spillLocator:name}},
// ...): text whose length upstream priced is gone.
var normalised = regexp.MustCompile(`\{\{[A-Za-z][\w-]*(:[^{}]*)?\}\}`)

// scrubbed names a recorded header's system prompt or tool schemas that
// hold a normaliser's token (scrubbed to {{system}} or {{tools}}): the
// price upstream computed is not the recorded text's ("": none).
func (rp recordedPressure) scrubbed(h recording.Event, data json.RawMessage) (string, error) {
	var d struct {
		Header struct {
			System json.RawMessage `json:"system"`
			Tools  json.RawMessage `json:"tools"`
		} `json:"header"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", fmt.Errorf("%s line %d: request/header: %w", rp.file, h.Line, err)
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"system", d.Header.System}, {"tools", d.Header.Tools}} {
		if tok := normalised.Find(f.raw); tok != nil {
			return fmt.Sprintf("%s line %d: request/header's %s, which the recording holds as the normalised token %s", rp.file, h.Line, f.name, tok), nil
		}
	}
	return "", nil
}

// upstreamText is an event of the replay's log as upstream's held it:
// the replay's workspace path in a surface event's text is written cwd.
func (rp recordedPressure) upstreamText(e session.Event, cwd string) session.Event {
	if len(e.SurfaceOp) == 0 {
		return e
	}
	text := string(e.Data)
	for _, ws := range rp.ws {
		text = strings.ReplaceAll(text, jsonText(ws), jsonText(cwd))
	}
	e.Data = json.RawMessage(text)
	return e
}

// window is the recorded context window of route: its last request/context
// before the pre-step point (none logged: an error naming the route).
func (rp recordedPressure) window(route compaction.Target) (int, bool, error) {
	for i := min(rp.point(), len(rp.events)) - 1; i >= 0; i-- {
		e := rp.events[i]
		if e.Type != session.KindRequestContext {
			continue
		}
		var c struct {
			Provider, Model string
			ContextWindow   *int `json:"contextWindow"`
		}
		if err := json.Unmarshal(e.Data, &c); err != nil {
			return 0, false, fmt.Errorf("%s line %d: request/context: %w", rp.file, e.Line, err)
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
		rp.file, route.Provider, route.Model, rp.turn, rp.step)
}
