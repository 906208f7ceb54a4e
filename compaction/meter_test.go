package compaction

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// header is a request/header event: system s (omitted when "-"), tools
// tools (raw JSON, omitted when "").
func header(system, tools string) session.Event {
	h := `{"config":{"provider":"p","model":"m"}`
	if system != "-" {
		h += fmt.Sprintf(`,"system":%q`, system)
	}
	if tools != "" {
		h += `,"tools":` + tools
	}
	return session.Event{Type: session.KindRequestHeader, Data: json.RawMessage(`{"header":` + h + `},"reason":"initial"}`)}
}

func step(typ string, turn, st int) session.Event {
	return session.Event{Type: typ, Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, st))}
}

// answer is an assistant message of text "ok" (9 tokens) for step 1/1,
// with usage (input, output) unless input < 0.
func answer(input, output int, extra string) session.Event {
	usage := ""
	if input >= 0 {
		usage = fmt.Sprintf(`,"usage":{"inputTokens":%d,"outputTokens":%d}`, input, output)
	}
	return session.Event{Type: session.KindAssistantMessage, SurfaceOp: json.RawMessage(`"append"`),
		Data: json.RawMessage(`{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}` + usage + extra + `}`)}
}

func seqd(evs ...session.Event) []session.Event {
	for i := range evs {
		evs[i].Seq = int64(i)
	}
	return evs
}

// TestEnvelopeOf: the system prompt and tool schemas priced as upstream's
// meter prices the canonical header, empty parts free.
func TestEnvelopeOf(t *testing.T) {
	for _, tc := range []struct {
		name          string
		system, tools string
		want          int
	}{
		{"neither", "-", "", 0},
		{"an empty system prompt", "", "[]", 0},
		{"4 units", "abcd", "", 5},
		{"5 units", "abcde", "", 6},
		{"a pair counts two units", "abc\U0001F600", "", 6},
		{"tools as JavaScript writes them", "-", `[ {"name": "x"} ]`, 8}, // [{"name":"x"}] is 14 units
		{"both", "abcde", `[{"name":"x"}]`, 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := jsjson.Parse(header(tc.system, tc.tools).Data)
			if err != nil {
				t.Fatal(err)
			}
			env, err := EnvelopeOf(v.Get("header"))
			if err != nil || env.Tokens != tc.want {
				t.Errorf("EnvelopeOf = %d, %v; want %d", env.Tokens, err, tc.want)
			}
		})
	}
}

// TestMeasure: the meter's total by baseline: none, the envelope and
// surface estimated, an anchor on usage no lower than its estimate (at
// the boundary), the growth since the anchor, and a changed envelope
// that drops the anchor.
func TestMeasure(t *testing.T) {
	h := header("abcde", `[{"name":"x"}]`) // 14
	u := user(0, 12)                       // 11
	for _, tc := range []struct {
		name     string
		events   []session.Event
		total    int
		baseline string
	}{
		{"nothing", nil, 0, "none"},
		{"a header alone", seqd(h), 14, "estimated"},
		{"a message alone", seqd(u), 11, "estimated"},
		{"usage above the estimate", seqd(h, step(session.KindStepStart, 1, 1), u, answer(100, 5, ""), step(session.KindStepEnd, 1, 1)), 105 + 11, "usage"},
		{"usage at the estimate", seqd(h, step(session.KindStepStart, 1, 1), u, answer(20, 3, ""), step(session.KindStepEnd, 1, 1)), 23 + 11, "usage"},
		{"usage one below the estimate", seqd(h, step(session.KindStepStart, 1, 1), u, answer(20, 2, ""), step(session.KindStepEnd, 1, 1)), 23 + 11, "estimated"},
		{"no usage", seqd(h, step(session.KindStepStart, 1, 1), u, answer(-1, 0, ""), step(session.KindStepEnd, 1, 1)), 23 + 11, "estimated"},
		{"the surface grown since", seqd(h, step(session.KindStepStart, 1, 1), u, answer(100, 5, ""), step(session.KindStepEnd, 1, 1), user(0, 4)), 105 + 11 + 5 + 4, "usage"},
		{"a changed envelope", seqd(h, step(session.KindStepStart, 1, 1), u, answer(100, 5, ""), step(session.KindStepEnd, 1, 1), header("abcd", "")), 5 + 20, "estimated"},
		{"the same envelope again", seqd(h, step(session.KindStepStart, 1, 1), u, answer(100, 5, ""), step(session.KindStepEnd, 1, 1), header("abcde", `[{"name":"x"}]`)), 116, "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Measure(tc.events)
			if err != nil {
				t.Fatal(err)
			}
			if m.TotalTokens != tc.total || m.Baseline != tc.baseline {
				t.Errorf("Measure = %d (%s), want %d (%s)", m.TotalTokens, m.Baseline, tc.total, tc.baseline)
			}
		})
	}
}

// TestMeasureRefusesABrokenStep: step boundaries that do not pair, and an
// interrupted message with usage (whose provider output is not ported),
// are errors naming the seq.
func TestMeasureRefusesABrokenStep(t *testing.T) {
	h := header("abcde", "")
	for _, tc := range []struct {
		name   string
		events []session.Event
		want   string
	}{
		{"an end without a start", seqd(step(session.KindStepEnd, 1, 1)), "seq 0 (step/end): step/end has no matching step/start"},
		{"an end of another step", seqd(step(session.KindStepStart, 1, 1), step(session.KindStepEnd, 1, 2)), "seq 1 (step/end)"},
		{"a start inside a step", seqd(step(session.KindStepStart, 1, 1), step(session.KindStepStart, 1, 2)), "seq 1 (step/start): step/start arrived before turn 1/step 1 ended"},
		{"a message outside a step", seqd(h, answer(1, 1, "")), "seq 1 (assistant/message): assistant/message has no matching step/start"},
		{"an interrupted message with usage", seqd(h, step(session.KindStepStart, 1, 1), answer(1, 1, `,"interrupted":true`)), "seq 2 (assistant/message): an interrupted assistant message with usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Measure(tc.events); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Measure = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
