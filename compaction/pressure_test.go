package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

// count is the number of events of typ in l.
func count(t *testing.T, l Log, typ string) int {
	t.Helper()
	events, err := l.Events()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// pressureLog is the recording's conversation inside its first step,
// ended: the meter anchors on the call (no usage: estimated).
func pressureLog(t *testing.T) *session.Log {
	t.Helper()
	l := sessiontest.New(t, "s", "/w")
	app := appender(t, l)
	app(session.KindTurnStart, map[string]int{"turn": 1}, nil)
	app(session.KindStepStart, map[string]int{"turn": 1, "step": 1}, nil)
	app(session.KindRequestHeader, json.RawMessage(`{"header":{"config":{"provider":"deepseek-official","model":"deepseek-v4-flash"}},"reason":"initial"}`), nil)
	for _, e := range []session.Event{user(0, 1032), assistant(0, 1), result(0)} {
		app(e.Type, e.Data, "append")
	}
	app(session.KindStepEnd, map[string]int{"turn": 1, "step": 1}, nil)
	return l
}

// TestPressure: the between-step check's rules on the recording's
// conversation (295 tokens: the prompt 266, the call 15, its result 14;
// no system prompt): the threshold at its boundary, the tail kept, the
// attempts bounded, and each case that compacts nothing (with upstream's
// warning where it logs one, or an InputError where an input failed).
func TestPressure(t *testing.T) {
	ok := Summary{Summary: []json.RawMessage{summaryText}, RawOutput: []json.RawMessage{summaryText}}
	at := func(w int) func(Target) (int, bool, error) {
		return func(Target) (int, bool, error) { return w, true, nil }
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	exact := Config{ThresholdRatio: f(1), RetainTokens: n(20)}
	for _, tc := range []struct {
		name        string
		cfg         Config
		ctx         context.Context
		prep        func(*session.Log)
		window      func(Target) (int, bool, error)
		compactions int
		warn, err   string
	}{
		{"one token below the threshold", exact, nil, nil, at(296), 0, "", ""},
		{"at the threshold", exact, nil, nil, at(295), 1, "", ""},
		{"upstream's default ratios", Config{}, nil, nil, at(187), 1, "", ""},    // threshold 149, tail 29: the call and result
		{"a tail that keeps everything", Config{}, nil, nil, at(368), 0, "", ""}, // threshold 294, tail 58: the prompt too
		{"auto off", Config{ThresholdRatio: f(1), RetainTokens: n(20), Auto: new(bool)}, nil, nil, at(1), 0, "", ""},
		{"a cancelled turn", exact, cancelled, nil, at(1), 0, "", ""},
		{"no routed request", exact, nil, func(l *session.Log) {
			l.Append(session.KindRequestHeader, json.RawMessage(`{"header":{"config":{"provider":"","model":"m"}}}`))
		}, at(1), 0, "", ""},
		{"a model without a context window", exact, nil, nil, func(Target) (int, bool, error) { return 0, false, nil },
			0, "compaction-basic: no context capacity for deepseek-official/deepseek-v4-flash; configure contextWindow on that adapter model", ""},
		{"a context window the caller cannot read", exact, nil, nil, func(Target) (int, bool, error) { return 0, false, errors.New("unknown window") }, 0, "", "unknown window"},
		{"a tail not below the threshold", Config{ThresholdRatio: f(1), RetainTokens: n(295)}, nil, nil, at(295),
			0, "BasicCompactionConfig: deepseek-official/deepseek-v4-flash retainTokens (295) must be less than threshold tokens 295", ""},
		{"an open compaction", exact, nil, func(l *session.Log) {
			l.Append(session.KindCompactionStart, map[string]any{"compactionId": "x", "turn": 1})
		}, at(1), 0, "automatic pressure compaction: compaction already in progress", ""},
		{"still above after its attempts", Config{ThresholdRatio: f(1), RetainTokens: n(20), CompactionRetries: n(0)}, nil, nil, at(30),
			1, "compaction still above threshold after 1 compaction attempts", ""},
		{"a model policy's threshold", Config{ModelPolicies: []ModelPolicy{{Provider: "deepseek-official", Model: "deepseek-v4-flash", Config: exact}}}, nil, nil, at(295), 1, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := pressureLog(t)
			if tc.prep != nil {
				tc.prep(l)
			}
			p, err := Resolve(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			calls := 0
			res, warn, err := NewEngine(p).Pressure(ctx, l, Inputs{Window: tc.window}, summarizer(&calls, ok, nil))
			if got := count(t, l, session.KindCompactionEnd); got != tc.compactions || calls != tc.compactions {
				t.Errorf("%d compactions, %d summary calls, want %d", got, calls, tc.compactions)
			}
			if (tc.compactions > 0) != (res != nil) {
				t.Errorf("result %+v", res)
			}
			if (tc.warn == "") != (warn == nil) || (warn != nil && !strings.Contains(warn.Error(), tc.warn)) {
				t.Errorf("warning %v, want %q", warn, tc.warn)
			}
			if (tc.err == "") != (err == nil) || (err != nil && (!IsInputError(err) || err.Error() != tc.err)) {
				t.Errorf("error %v, want the InputError %q", err, tc.err)
			}
		})
	}
}

// TestPressureKeepsTheTail: the compaction keeps the fewest last nodes
// priced at least the spec's tail (the call and its result, 29 tokens)
// and replaces the prompt only.
func TestPressureKeepsTheTail(t *testing.T) {
	l := pressureLog(t)
	p, _ := Resolve(Config{ThresholdRatio: f(1), RetainTokens: n(20)})
	calls := 0
	res, warn, err := NewEngine(p).Pressure(context.Background(), l, Inputs{Window: func(Target) (int, bool, error) { return 295, true, nil }},
		summarizer(&calls, Summary{Summary: []json.RawMessage{summaryText}}, nil))
	if err != nil || warn != nil || res == nil {
		t.Fatalf("Pressure = %+v, %v, %v", res, warn, err)
	}
	if res.ShadowedTokenCount != 266 || len(res.ShadowedSeqs) != 1 {
		t.Errorf("shadowed %v (%d tokens), want the prompt alone (266)", res.ShadowedSeqs, res.ShadowedTokenCount)
	}
}

// TestPressurePrunesFirst: with the pruner mounted, a session over the
// threshold has its long tool results pruned and is measured again; one
// then below the threshold is not compacted.
func TestPressurePrunesFirst(t *testing.T) {
	l := pressureLog(t)
	long := strings.Repeat("x", 200)
	l.Append(session.KindStepStart, map[string]int{"turn": 1, "step": 2})
	l.AppendWith(session.KindAssistantMessage, json.RawMessage(strings.Replace(string(assistant(0, 1).Data), `"step":1`, `"step":2`, 1)), session.AppendOptions{SurfaceOp: "append"})
	l.AppendWith(session.KindToolResult, json.RawMessage(`{"turn":1,"step":1,"message":{"content":[{"type":"tool-result","toolCallId":"c0","content":[{"type":"text","text":"`+long+`"}],"isError":false}],"role":"user"}}`),
		session.AppendOptions{SurfaceOp: "append"})
	l.Append(session.KindStepEnd, map[string]int{"turn": 1, "step": 2})
	pr, err := ResolvePruner(PruneConfig{ThresholdChars: n(100), HeadChars: n(10), TailChars: n(10)})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Resolve(Config{ThresholdRatio: f(1), RetainTokens: n(20)})
	calls := 0
	// 295 + 15 + (50+4+4+4) = 372; pruned to 10+40+10 units: 15+4+4+4 = 27, so 337
	res, warn, err := NewEngine(p).WithPruner(pr).Pressure(context.Background(), l, Inputs{Window: func(Target) (int, bool, error) { return 340, true, nil }},
		summarizer(&calls, Summary{Summary: []json.RawMessage{summaryText}}, nil))
	if res != nil || warn != nil || err != nil || calls != 0 {
		t.Fatalf("Pressure = %+v, %v, %v, %d calls", res, warn, err, calls)
	}
	if count(t, l, KindPrune) != 1 {
		t.Errorf("%d prunes, want 1", count(t, l, KindPrune))
	}
}

// TestPressureBoundedMeasure: a caller's meter that cannot price an input
// exactly gives the least and the most the request can cost; the check
// compacts when the least reaches the threshold, leaves it when the most
// stays below, and otherwise fails naming the input rather than guess. A
// model with no context window needs no measure: a meter that would fail
// is never asked.
func TestPressureBoundedMeasure(t *testing.T) {
	ok := Summary{Summary: []json.RawMessage{summaryText}, RawOutput: []json.RawMessage{summaryText}}
	bounded := func(lo, hi int) func(Log) (Measurement, error) {
		return func(l Log) (Measurement, error) {
			m, err := measureLog(l)
			if err != nil {
				return m, err
			}
			// the compacted log (priced below) is priced exactly
			if m.TotalTokens < 295 {
				return m, nil
			}
			m.TotalTokens, m.Upper, m.Unknown = lo, hi, "the envelope"
			return m, nil
		}
	}
	failing := func(Log) (Measurement, error) { return Measurement{}, errors.New("meter failed") }
	for _, tc := range []struct {
		name        string
		measure     func(Log) (Measurement, error)
		window      int
		has         bool
		compactions int
		warn, err   string
	}{
		{"the least at the threshold", bounded(300, 400), 300, true, 1, "", ""},
		{"the most one below the threshold", bounded(200, 299), 300, true, 0, "", ""},
		{"the most at the threshold", bounded(200, 300), 300, true, 0, "",
			"the envelope: the next request is priced between 200 and 300 tokens, across the threshold 300, so whether upstream compacted cannot be known"},
		{"no window: the meter is not asked", failing, 0, false, 0, "no context capacity", ""},
		{"a window: the meter's failure is the caller's", failing, 300, true, 0, "", "meter failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := pressureLog(t)
			p, err := Resolve(Config{ThresholdRatio: f(1), RetainTokens: n(20)})
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			in := Inputs{Measure: tc.measure, Window: func(Target) (int, bool, error) { return tc.window, tc.has, nil }}
			_, warn, err := NewEngine(p).Pressure(context.Background(), l, in, summarizer(&calls, ok, nil))
			if got := count(t, l, session.KindCompactionEnd); got != tc.compactions {
				t.Errorf("%d compactions, want %d", got, tc.compactions)
			}
			if (tc.warn == "") != (warn == nil) || (warn != nil && !strings.Contains(warn.Error(), tc.warn)) {
				t.Errorf("warning %v, want %q", warn, tc.warn)
			}
			if (tc.err == "") != (err == nil) || (err != nil && (!IsInputError(err) || err.Error() != tc.err)) {
				t.Errorf("error %v, want the InputError %q", err, tc.err)
			}
		})
	}
}
