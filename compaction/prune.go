package compaction

import (
	"encoding/json"
	"fmt"
	"unicode/utf16"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// PruneMarker replaces the middle of a pruned tool result (upstream's
// PRUNE_MARKER).
const PruneMarker = "\n\n[... tool result middle pruned ...]\n\n"

// KindPrune is the shadow-price event before a pruned tool result.
const KindPrune = session.KindCompactionPrune

// PruneConfig is upstream's ToolResultPruneConfig; an absent field keeps
// the default (8192, 4096, 1024).
type PruneConfig struct {
	ThresholdChars *int `json:"thresholdChars,omitempty"`
	HeadChars      *int `json:"headChars,omitempty"`
	TailChars      *int `json:"tailChars,omitempty"`
}

// Pruner is upstream's dsh-compaction-tool-result-pruner, resolved: a tool
// result whose text is longer than ThresholdChars code points keeps its
// first HeadChars and last TailChars, [PruneMarker] between.
type Pruner struct {
	ThresholdChars, HeadChars, TailChars int
}

// ResolvePruner validates c as upstream does at load. Pure.
func ResolvePruner(c PruneConfig) (*Pruner, error) {
	p := &Pruner{ThresholdChars: 8192, HeadChars: 4096, TailChars: 1024}
	for _, f := range []struct {
		name string
		v    *int
		dst  *int
		min  int
	}{{"thresholdChars", c.ThresholdChars, &p.ThresholdChars, 1}, {"headChars", c.HeadChars, &p.HeadChars, 0}, {"tailChars", c.TailChars, &p.TailChars, 0}} {
		if f.v != nil {
			*f.dst = *f.v
		}
		if *f.dst < f.min {
			what := "a non-negative integer"
			if f.min == 1 {
				what = "a positive integer"
			}
			return nil, &ConfigError{f.name, fmt.Sprintf("(%d) must be %s", *f.dst, what)}
		}
	}
	if emitted := p.HeadChars + len(codePoints(utf16.Encode([]rune(PruneMarker)))) + p.TailChars; emitted > p.ThresholdChars {
		return nil, &ConfigError{"thresholdChars", fmt.Sprintf("headChars + marker + tailChars (%d) must be at most thresholdChars (%d)", emitted, p.ThresholdChars)}
	}
	return p, nil
}

// codePoints splits UTF-16 units into code points (a pair as one, a lone
// surrogate as one), as JavaScript's Array.from(string) does.
func codePoints(u []uint16) [][]uint16 {
	var out [][]uint16
	for i := 0; i < len(u); i++ {
		if utf16.IsSurrogate(rune(u[i])) && u[i] < 0xdc00 && i+1 < len(u) && u[i+1] >= 0xdc00 && u[i+1] <= 0xdfff {
			out = append(out, u[i:i+2])
			i++
			continue
		}
		out = append(out, u[i:i+1])
	}
	return out
}

// chars is the code points of the text blocks of content.
func chars(content []*jsjson.Value) int {
	n := 0
	for _, b := range content {
		if b.Get("type").Str() == "text" {
			n += len(codePoints(b.Get("text").Units))
		}
	}
	return n
}

// Content prunes a tool result's content blocks (nil: within budget). A
// text block's head and tail are kept by code point, the marker once at
// the first block that overlaps the removed middle; an emptied text block
// is dropped; other blocks stay in place. Pure.
func (p *Pruner) Content(content []*jsjson.Value) ([]*jsjson.Value, error) {
	total := chars(content)
	if total <= p.ThresholdChars {
		return nil, nil
	}
	removedStart, removedEnd := p.HeadChars, total-p.TailChars
	var out []*jsjson.Value
	consumed, marked := 0, false
	for _, b := range content {
		if b.Get("type").Str() != "text" {
			out = append(out, b)
			continue
		}
		points := codePoints(b.Get("text").Units)
		start, end := consumed, consumed+len(points)
		head := min(len(points), max(0, removedStart-start))
		tail := min(len(points), max(0, removedEnd-start))
		var text []uint16
		for _, cp := range points[:head] {
			text = append(text, cp...)
		}
		if start < removedEnd && end > removedStart && !marked {
			text, marked = append(text, utf16.Encode([]rune(PruneMarker))...), true
		}
		for _, cp := range points[tail:] {
			text = append(text, cp...)
		}
		if len(text) > 0 {
			out = append(out, withText(b, text))
		}
		consumed = end
	}
	if !marked {
		return nil, fmt.Errorf("tool-result prune: failed to locate the removed text span")
	}
	if after := chars(out); after > p.ThresholdChars || after >= total {
		return nil, fmt.Errorf("tool-result prune: replacement must be smaller and within threshold")
	}
	return out, nil
}

// withText is block b with its text replaced, in its key's place.
func withText(b *jsjson.Value, text []uint16) *jsjson.Value {
	return replaceMember(b, "text", &jsjson.Value{Kind: jsjson.String, Units: text})
}

// pruneData is compaction/prune's data.
type pruneData struct {
	ShadowedRange      shadowedRange `json:"shadowedRange"`
	ShadowedSeqs       []int64       `json:"shadowedSeqs"`
	ShadowedTokenCount int           `json:"shadowedTokenCount"`
}

// PruneSession prunes every over-budget tool result on the log's current
// surface, in surface order: compaction/prune (the node's range and
// price), then the tool/result with its first block's content pruned,
// replacing the node (sourceEventSeqs: the node). n counts the
// replacements; those made before a failure stay.
func (p *Pruner) PruneSession(log Log) (n int, err error) {
	events, err := log.Events()
	if err != nil {
		return 0, err
	}
	s, err := Fold(events)
	if err != nil {
		return 0, err
	}
	for _, node := range s.Nodes {
		e, ok := eventAt(events, node.Seq)
		if !ok || e.Type != session.KindToolResult {
			continue
		}
		data, err := p.prunedResult(e)
		if err != nil || data == nil {
			if err != nil {
				return n, fmt.Errorf("seq %d: %w", e.Seq, err)
			}
			continue
		}
		rng := shadowedRange{Start: e.Seq, End: e.Seq}
		if _, err := log.AppendWith(KindPrune, pruneData{ShadowedRange: rng, ShadowedSeqs: []int64{e.Seq}, ShadowedTokenCount: node.Tokens}, session.AppendOptions{}); err != nil {
			return n, err
		}
		op := replaceOp{Op: "replace", Start: e.Seq, End: e.Seq}
		if _, err := log.AppendWith(session.KindToolResult, json.RawMessage(jsjson.Stringify(data)), session.AppendOptions{SurfaceOp: op, SourceEventSeqs: []int64{e.Seq}}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// prunedResult is a tool/result's data with its first block's content
// pruned (nil: within budget).
func (p *Pruner) prunedResult(e session.Event) (*jsjson.Value, error) {
	d, err := jsjson.Parse(e.Data)
	if err != nil {
		return nil, err
	}
	first := d.Get("message").Get("content")
	if first == nil || first.Kind != jsjson.Array || len(first.Elems) == 0 {
		return nil, fmt.Errorf("data.message.content: want a tool-result block")
	}
	inner := first.Elems[0].Get("content")
	if inner == nil || inner.Kind != jsjson.Array {
		return nil, fmt.Errorf("data.message.content[0].content: want an array")
	}
	pruned, err := p.Content(inner.Elems)
	if err != nil || pruned == nil {
		return nil, err
	}
	content := &jsjson.Value{Kind: jsjson.Array, Elems: pruned}
	block := replaceMember(first.Elems[0], "content", content)
	msg := replaceMember(d.Get("message"), "content", &jsjson.Value{Kind: jsjson.Array, Elems: []*jsjson.Value{block}})
	return replaceMember(d, "message", msg), nil
}

// replaceMember is object o with member key's value v, in its place.
func replaceMember(o *jsjson.Value, key string, v *jsjson.Value) *jsjson.Value {
	c := *o
	c.Members = append([]jsjson.Member(nil), o.Members...)
	for i, m := range c.Members {
		if m.KeyString() == key {
			c.Members[i].Value = v
		}
	}
	return &c
}

// eventAt is the event of seq.
func eventAt(events []session.Event, seq int64) (session.Event, bool) {
	for _, e := range events {
		if e.Seq == seq {
			return e, true
		}
	}
	return session.Event{}, false
}
