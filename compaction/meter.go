package compaction

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Envelope is a request header's non-surface part as the meter prices it
// (upstream's canonical header): the system prompt's price
// ceil(len/4)+4 (0 when absent or empty), the tool schemas' price
// ceil(len(JSON)/4)+4 (0 when absent or empty), and the identity
// upstream's headerEquals compares.
type Envelope struct {
	Tokens int
	key    string
}

// EnvelopeOf prices a request/header's header object. Pure.
func EnvelopeOf(header *jsjson.Value) (Envelope, error) {
	if header == nil || header.Kind != jsjson.Object {
		return Envelope{}, fmt.Errorf("header: want an object")
	}
	var env Envelope
	var key strings.Builder
	config := header.Get("config")
	for _, f := range []string{"provider", "model", "reasoningEffort", "temperature", "maxTokens", "stop"} {
		key.WriteString(field(config, f) + "\x00")
	}
	defaults := header.Get("adapterDefaults")
	key.WriteString(field(defaults, "reasoningEffort") + "\x00" + field(defaults, "maxTokens") + "\x00")
	if sys := header.Get("system"); sys != nil {
		if sys.Kind != jsjson.String {
			return Envelope{}, fmt.Errorf("header.system: want a string")
		}
		if n := unitsOf(sys); n > 0 {
			env.Tokens += tokensOf(n) + BlockOverhead
			key.WriteString(jsjson.Stringify(sys))
		}
	}
	key.WriteString("\x00")
	if tools := header.Get("tools"); tools != nil {
		if tools.Kind != jsjson.Array {
			return Envelope{}, fmt.Errorf("header.tools: want an array")
		}
		if len(tools.Elems) > 0 {
			text := jsjson.Stringify(tools)
			env.Tokens += tokensOf(utf16Len(text)) + BlockOverhead
			key.WriteString(text)
		}
	}
	env.key = key.String()
	return env, nil
}

// field is the JSON text of obj[name] ("" when absent).
func field(obj *jsjson.Value, name string) string {
	if obj == nil || obj.Kind != jsjson.Object {
		return ""
	}
	if v := obj.Get(name); v != nil {
		return jsjson.Stringify(v)
	}
	return ""
}

// Measurement is the meter's price of the next request (upstream's
// TokenMeter.measure): the envelope in force and the surface, anchored on
// the last assistant message's provider usage when its envelope is the
// same one and the usage is no lower than the estimate.
type Measurement struct {
	TotalTokens   int
	SurfaceTokens int
	// Baseline is "none", "estimated" or "usage".
	Baseline string
	Nodes    []Node
	// Unknown names an input a caller's meter could not read exactly
	// ("": none, the total is exact); TotalTokens is then the least the
	// request can be priced and Upper the most.
	Unknown string
	Upper   int
}

// anchor is the last assistant message's pressure sample.
type anchor struct {
	env      *Envelope
	surface  int
	baseline int
	kind     string
}

// meterState is the meter's fold of a log.
type meterState struct {
	env       *Envelope
	surface   *Surface
	stepStart *struct{ turn, step, surface int }
	anchor    *anchor
}

// Measure folds events as upstream's token meter does and prices the next
// request: its request/header events set the envelope (last wins), its
// surface events the surface, each step/start the surface its step began
// with, and each assistant/message an anchor (the usage's
// inputTokens+cacheReadTokens+cacheWriteTokens+outputTokens when at least
// the estimate of the envelope, the step's starting surface and the
// message; else that estimate). The total is the anchor's baseline plus
// the surface's growth since, when the envelope is still the anchor's;
// else the envelope and the surface estimated. Pure.
func Measure(events []session.Event) (Measurement, error) {
	st := meterState{surface: &Surface{}}
	for _, e := range events {
		if err := st.fold(e); err != nil {
			return Measurement{}, fmt.Errorf("token meter: seq %d (%s): %w", e.Seq, e.Type, err)
		}
	}
	m := Measurement{SurfaceTokens: st.surface.Tokens, Nodes: append([]Node(nil), st.surface.Nodes...)}
	a := st.anchor
	switch {
	case a != nil && sameEnvelope(a.env, st.env):
		m.Baseline, m.TotalTokens = a.kind, a.baseline+st.surface.Tokens-a.surface
	case st.env == nil && st.surface.Tokens == 0:
		m.Baseline = "none"
	default:
		m.Baseline, m.TotalTokens = "estimated", envTokens(st.env)+st.surface.Tokens
	}
	m.TotalTokens = max(0, m.TotalTokens)
	return m, nil
}

func sameEnvelope(a, b *Envelope) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.key == b.key
}

func envTokens(e *Envelope) int {
	if e == nil {
		return 0
	}
	return e.Tokens
}

// stepData is a step/start's, step/end's or assistant/message's step.
type stepData struct {
	Turn, Step  int
	Interrupted bool
	Usage       *struct {
		InputTokens      float64 `json:"inputTokens"`
		OutputTokens     float64 `json:"outputTokens"`
		CacheReadTokens  float64 `json:"cacheReadTokens"`
		CacheWriteTokens float64 `json:"cacheWriteTokens"`
	}
}

func (st *meterState) fold(e session.Event) error {
	var d stepData
	switch e.Type {
	case session.KindRequestHeader:
		v, err := jsjson.Parse(e.Data)
		if err != nil {
			return err
		}
		env, err := EnvelopeOf(v.Get("header"))
		if err != nil {
			return err
		}
		st.env = &env
	case session.KindStepStart, session.KindStepEnd, session.KindAssistantMessage:
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
	}
	switch e.Type {
	case session.KindStepStart:
		if st.stepStart != nil {
			return fmt.Errorf("step/start arrived before turn %d/step %d ended", st.stepStart.turn, st.stepStart.step)
		}
		st.stepStart = &struct{ turn, step, surface int }{d.Turn, d.Step, st.surface.Tokens}
	case session.KindStepEnd:
		if st.stepStart == nil || st.stepStart.turn != d.Turn || st.stepStart.step != d.Step {
			return fmt.Errorf("step/end has no matching step/start event")
		}
		st.stepStart = nil
	}
	before := len(st.surface.Nodes)
	if len(e.SurfaceOp) > 0 && isSurfaceKind(e.Type) {
		if err := st.surface.fold(e); err != nil {
			return err
		}
	}
	if e.Type == session.KindAssistantMessage {
		return st.anchorAt(e, d, before)
	}
	return nil
}

// anchorAt takes the pressure sample of an assistant message (its node
// appended after before nodes).
func (st *meterState) anchorAt(e session.Event, d stepData, before int) error {
	ss := st.stepStart
	if ss == nil || ss.turn != d.Turn || ss.step != d.Step {
		return fmt.Errorf("assistant/message has no matching step/start event")
	}
	tokens := 0
	if len(st.surface.Nodes) > before {
		tokens = st.surface.Nodes[len(st.surface.Nodes)-1].Tokens
	}
	a := &anchor{env: st.env, surface: ss.surface + tokens, kind: "estimated"}
	a.baseline = envTokens(st.env) + a.surface
	if d.Usage != nil && st.env != nil {
		if d.Interrupted {
			// upstream prices the chunks' reassembled blocks, which an
			// interrupted message's partial content need not equal
			return fmt.Errorf("an interrupted assistant message with usage: the price of its provider output is not ported")
		}
		u := d.Usage
		provider := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens
		if math.IsNaN(provider) || provider > 1<<53 {
			return fmt.Errorf("usage: want token counts up to 2^53, got %v", provider)
		}
		if provider >= float64(a.baseline) {
			a.baseline, a.kind = int(provider), "usage"
		}
	}
	st.anchor = a
	return nil
}

func isSurfaceKind(t string) bool {
	return t == session.KindUserMessage || t == session.KindAssistantMessage || t == session.KindToolResult
}
