package spill

import (
	"context"
	"fmt"
	"log"
	"math"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
)

// Unit is what the inline budget counts.
type Unit int

const (
	// Tokens counts estimated tokens (ceil(UTF-16 length/4)+4 per text block).
	Tokens Unit = iota + 1
	// Bytes counts UTF-8 bytes of the concatenated text (August layout).
	Bytes
)

// DefaultMaxInlineTokens is the base bundle's token cap.
const DefaultMaxInlineTokens = 12500

// Gap is the marker between the head and tail previews in the token layout.
const Gap = "\n\n[...]\n\n"

// Config is the spill-policy configuration as it appears in a deployment file.
// Numbers are float64 so that a fractional or negative value can be rejected
// with the upstream message instead of failing to decode.
type Config struct {
	// MaxInlineTokens selects the token budget.
	MaxInlineTokens *float64 `json:"maxInlineTokens,omitempty"`
	// MaxInlineBytes selects the August byte budget.
	MaxInlineBytes *float64 `json:"maxInlineBytes,omitempty"`
}

// TokenConfig returns a config with a token cap.
func TokenConfig(n int) Config { v := float64(n); return Config{MaxInlineTokens: &v} }

// DefaultConfig is the base bundle's configuration: maxInlineTokens 12500.
// (An empty Config disables spilling, as an omitted cap does upstream.)
func DefaultConfig() Config { return TokenConfig(DefaultMaxInlineTokens) }

// ByteConfig returns a config with a byte cap.
func ByteConfig(n int) Config { v := float64(n); return Config{MaxInlineBytes: &v} }

// Policy decides and performs spills. The zero value and a nil *Policy are
// disabled (every result passes unchanged).
type Policy struct {
	unit  Unit
	cap   int
	store *Store
	warn  func(string)
}

// New validates cfg and returns a policy that saves into store. warn receives
// every warning (nil logs with the standard logger). A nil store is allowed:
// every result that should spill is then kept inline with a warning.
func New(cfg Config, store *Store, warn func(string)) (*Policy, error) {
	if warn == nil {
		warn = func(s string) { log.Print(s) }
	}
	p := &Policy{store: store, warn: warn}
	switch {
	case cfg.MaxInlineTokens != nil && cfg.MaxInlineBytes != nil:
		return nil, fmt.Errorf("spill-policy: set only one of maxInlineTokens and maxInlineBytes")
	case cfg.MaxInlineTokens != nil:
		n, err := capValue("maxInlineTokens", *cfg.MaxInlineTokens)
		if err != nil {
			return nil, err
		}
		p.unit, p.cap = Tokens, n
	case cfg.MaxInlineBytes != nil:
		n, err := capValue("maxInlineBytes", *cfg.MaxInlineBytes)
		if err != nil {
			return nil, err
		}
		p.unit, p.cap = Bytes, n
	default:
		return p, nil
	}
	return p, nil
}

func capValue(field string, v float64) (int, error) {
	if v < 0 || v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) || v > 1<<53 {
		return 0, fmt.Errorf("spill-policy: %s must be a non-negative integer (got %s)", field, strconv.FormatFloat(v, 'f', -1, 64))
	}
	return int(v), nil
}

// Enabled reports whether a cap is configured.
func (p *Policy) Enabled() bool { return p != nil && p.unit != 0 }

// Unit returns the budget unit (0 when disabled).
func (p *Policy) Unit() Unit {
	if p == nil {
		return 0
	}
	return p.unit
}

// Cap returns the configured cap.
func (p *Policy) Cap() int {
	if p == nil {
		return 0
	}
	return p.cap
}

// --8<-- [start:notice]
// Notice is the VERBATIM spill notice.
func Notice(omitted int64, locator string) string {
	return "(Omitted " + strconv.FormatInt(omitted, 10) + " bytes. Full formatted result stored at: " + locator + ". " + RetrievalHint + ")"
}

// --8<-- [end:notice]

// Spillable reports whether a result of call with this content may spill at
// all (the skip rules), and why not.
func Spillable(call *pipeline.Call, content []pipeline.Block) (ok bool, why string) {
	switch {
	case call == nil:
		return false, "no call"
	case call.Parent() != nil:
		return false, "nested call"
	case call.Name() == "read":
		return false, "read is never spilled"
	}
	for _, b := range content {
		if b.Type != "text" {
			return false, "non-text block"
		}
	}
	return true, ""
}

// Over reports whether content exceeds the budget.
func (p *Policy) Over(content []pipeline.Block) bool {
	if !p.Enabled() {
		return false
	}
	if p.unit == Bytes {
		n := 0
		for _, b := range content {
			n += len(b.Text)
		}
		return n > p.cap
	}
	n := 0
	for _, b := range content {
		n += EstimateTokens(b.Text)
	}
	return n > p.cap
}

// Apply bounds one final result of call: it returns the result with its
// content replaced by the preview and notice when it spilled, else res
// unchanged. The returned bool reports a spill. Apply never fails: a store
// failure or a replacement that would not fit keeps res and logs a warning.
func (p *Policy) Apply(call *pipeline.Call, res pipeline.Result) (pipeline.Result, bool) {
	if !p.Enabled() {
		return res, false
	}
	if ok, _ := Spillable(call, res.Content); !ok {
		return res, false
	}
	content, spilled := p.bound(call, res.Content, "result")
	if !spilled {
		return res, false
	}
	out := res
	out.Content = content
	return out, true
}

// DispatchLog is the durable-log arm (as upstream's spill policy): it bounds
// the copy of a run_code nested call's content that the session log keeps
// (tool/code-dispatch), the same way as a result; nested calls and read are
// not exempt here (the program's value is untouched either way). It returns
// nil when the content stays as it is.
func (p *Policy) DispatchLog(call *pipeline.Call, content []pipeline.Block) []pipeline.Block {
	if !p.Enabled() || call == nil {
		return nil
	}
	for _, b := range content {
		if b.Type != "text" {
			return nil
		}
	}
	out, spilled := p.bound(call, content, "dispatch")
	if !spilled {
		return nil
	}
	return out
}

// bound replaces content over the budget by the preview and notice, saving
// the full text; label names the copy in warnings.
func (p *Policy) bound(call *pipeline.Call, content []pipeline.Block, label string) ([]pipeline.Block, bool) {
	if !p.Over(content) {
		return content, false
	}
	texts := make([]string, len(content))
	for i, b := range content {
		texts[i] = b.Text
	}
	full := strings.Join(texts, "")
	name := call.Name() + ".txt"
	if p.store == nil {
		p.warn(fmt.Sprintf("spill-policy: keeping the %s %s of call %s inline: no spill store is composed", call.Name(), label, call.CallID()))
		return content, false
	}
	saved, err := p.store.Save(call.SessionID(), name, full)
	if err != nil {
		p.warn(fmt.Sprintf("spill-policy: keeping the %s %s of call %s inline: %v", call.Name(), label, call.CallID(), err))
		return content, false
	}
	var text string
	var ok bool
	if p.unit == Bytes {
		text, ok = p.byteLayout(&windows{head: full, tail: full, bytes: int64(len(full))}, saved.Locator)
	} else {
		text, ok = p.tokenLayout(texts, nil, saved.Locator)
	}
	if !ok {
		removeQuiet(saved.Locator)
		p.warn(fmt.Sprintf("spill-policy: keeping the %s %s of call %s inline: the spill notice exceeds %s %d", call.Name(), label, call.CallID(), p.capName(), p.cap))
		return content, false
	}
	return []pipeline.Block{pipeline.TextBlock(text)}, true
}

func (p *Policy) capName() string {
	if p.unit == Bytes {
		return "maxInlineBytes"
	}
	return "maxInlineTokens"
}

// windows is a single text whose head and tail are known (whole text for an
// in-memory result, bounded windows for a stream).
type windows struct {
	head, tail string // a prefix and a suffix of the text
	bytes      int64  // total UTF-8 bytes
}

// byteLayout is the August layout: head = ceil(budget/2) bytes, tail =
// floor(budget/2) bytes, trimmed to whole UTF-8 sequences, concatenated with
// no marker, then "\n\n" + notice.
func (p *Policy) byteLayout(w *windows, locator string) (string, bool) {
	reserve := int64(len(Notice(w.bytes, locator)) + 2)
	budget := int64(p.cap) - reserve
	if budget < 0 {
		budget = 0
	}
	hn, tn := (budget+1)/2, budget/2
	head := w.head[:min(int64(len(w.head)), hn)]
	tail := w.tail[int64(len(w.tail))-min(int64(len(w.tail)), tn):]
	// trim head back to a complete sequence, drop leading continuation bytes of tail
	head = trimIncompleteEnd(head)
	for len(tail) > 0 && tail[0]&0xC0 == 0x80 {
		tail = tail[1:]
	}
	omitted := w.bytes - int64(len(head)) - int64(len(tail))
	preview := head + tail
	text := Notice(omitted, locator)
	if preview != "" {
		text = preview + "\n\n" + text
	}
	return text, len(text) <= p.cap
}

func trimIncompleteEnd(s string) string {
	// walk back over at most 3 continuation bytes to the last leader
	for i := len(s) - 1; i >= 0 && i >= len(s)-4; i-- {
		c := s[i]
		if c&0xC0 == 0x80 {
			continue
		}
		if c < 0x80 {
			return s
		}
		need := 2
		switch {
		case c >= 0xF0:
			need = 4
		case c >= 0xE0:
			need = 3
		}
		if len(s)-i < need {
			return s[:i]
		}
		return s
	}
	return s
}

// tokenLayout is the newer layout over text blocks (or, when blocks is nil,
// over the single streamed text w).
func (p *Policy) tokenLayout(blocks []string, w *windows, locator string) (string, bool) {
	var totalBytes int64
	if blocks != nil {
		for _, b := range blocks {
			totalBytes += int64(len(b))
		}
	} else {
		totalBytes = w.bytes
	}
	worst := "\n\n" + Notice(totalBytes, locator)
	if EstimateTokens(worst) > p.cap {
		return "", false
	}
	reserve := EstimateTokens(Gap) + EstimateTokens(worst)
	budget := p.cap - reserve
	if budget < 0 {
		budget = 0
	}
	headBudget, tailBudget := (budget+1)/2, budget/2

	var head, tail strings.Builder
	if blocks != nil {
		// head: whole blocks while they fit, then cut the edge block
		hi, hcut := 0, ""
		rem := headBudget
		for hi < len(blocks) {
			c := EstimateTokens(blocks[hi])
			if c <= rem {
				head.WriteString(blocks[hi])
				rem -= c
				hi++
				continue
			}
			hcut = prefixUnits(blocks[hi], maxUnitsFor(rem))
			head.WriteString(hcut)
			break
		}
		// tail: from the end, never reaching into what head kept
		var parts []string
		rem = tailBudget
		for ti := len(blocks) - 1; ti >= hi; ti-- {
			b := blocks[ti]
			if ti == hi {
				b = b[len(hcut):]
			}
			c := EstimateTokens(b)
			if c <= rem && ti > hi {
				parts = append(parts, b)
				rem -= c
				continue
			}
			cut := suffixUnits(b, maxUnitsFor(rem))
			parts = append(parts, cut)
			break
		}
		for i := len(parts) - 1; i >= 0; i-- {
			tail.WriteString(parts[i])
		}
	} else {
		head.WriteString(prefixUnits(w.head, maxUnitsFor(headBudget)))
		t := suffixUnits(w.tail, maxUnitsFor(tailBudget))
		for len(t) > 0 && t[0]&0xC0 == 0x80 { // a window cut inside a sequence
			t = t[1:]
		}
		tail.WriteString(t)
	}
	omitted := totalBytes - int64(head.Len()) - int64(tail.Len())
	notice := Notice(omitted, locator)
	var text string
	switch {
	case head.Len() == 0 && tail.Len() == 0:
		text = notice
	case tail.Len() == 0:
		text = head.String() + Gap + notice
	default:
		text = head.String() + Gap + tail.String() + "\n\n" + notice
	}
	return text, EstimateTokens(text) <= p.cap
}

// --8<-- [start:post-execute]
// Listener adapts the policy to a post-execute listener: it runs the inner
// listeners first, then bounds an accept decision's content (the replacement
// content when one was given, else the result's content). A block decision,
// an error and a disabled policy pass unchanged.
func (p *Policy) Listener() pipeline.PostExecute {
	return func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		d, err := next()
		if err != nil || d.Kind != pipeline.PostAccept || !p.Enabled() {
			return d, err
		}
		r := res
		if d.Content != nil {
			r.Content = d.Content
		}
		out, spilled := p.Apply(call, r)
		if spilled {
			d.Content = out.Content
		}
		return d, nil
	}
}

// --8<-- [end:post-execute]

// Hook registers the listener outermost (prepended) on reg and returns its
// removal.
func (p *Policy) Hook(reg *pipeline.Registry) (remove func()) {
	return reg.PrependPostExecute(p.Listener())
}
