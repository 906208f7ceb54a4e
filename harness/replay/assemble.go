package replay

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline/session"
)

// assembler builds an assistant message from streamed chunks as upstream's
// block assembler does: blocks in the order their index first appeared, a
// block-end's block as given, an open block from its deltas; on a
// max-tokens finish every tool-call block is dropped (a truncated call
// cannot run safely); a stream without a finish finishes "stop".
type assembler struct {
	order    []int
	partials map[int]*partialBlock
	usage    json.RawMessage // the last usage reported (nil: none)
	finish   *finishReason   // the last finish's reason (nil: none)
}

// chunk is what the assembler reads of a streamed chunk (readMembers).
type chunk struct {
	Type           string          `json:"type"`
	Index          float64         `json:"index"`
	BlockType      string          `json:"blockType"`
	Text           string          `json:"text"`
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	ArgumentsDelta string          `json:"argumentsDelta"`
	Block          json.RawMessage `json:"block"`
	Usage          json.RawMessage `json:"usage"`
	Reason         json.RawMessage `json:"reason"`
}

// finishReason is a finish chunk's reason: its kind, and an error's
// failure (passed through as the model reported it).
type finishReason struct {
	Kind    string          `json:"kind"`
	Failure json.RawMessage `json:"failure"`
}

// replyBlock is one block of an assembled message: what the loop reads of
// it (its type, a text's text, a tool call's id, name and arguments) and
// its JSON as logged, in upstream's key order.
type replyBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	json      json.RawMessage
}

type partialBlock struct {
	blockType string
	text      strings.Builder
	id, name  string
	args      strings.Builder
	block     *replyBlock // set by block-end
}

func newAssembler() *assembler { return &assembler{partials: map[int]*partialBlock{}} }

// push feeds one chunk (already validated by the recording's loader).
func (a *assembler) push(raw json.RawMessage) {
	var c chunk
	readMembers(raw, &c)
	idx := int(c.Index)
	switch c.Type {
	case llm.BlockStart:
		a.ensure(idx, c.BlockType)
	case llm.TextDelta, llm.ReasoningDelta:
		if p := a.ensure(idx, strings.TrimSuffix(c.Type, "-delta")); p.block == nil {
			p.text.WriteString(c.Text)
		}
	case llm.ToolCallDelta:
		if p := a.ensure(idx, llm.ToolCall); p.block == nil {
			p.id = c.ID
			if c.Name != "" {
				p.name = c.Name
			}
			p.args.WriteString(c.ArgumentsDelta)
		}
	case llm.BlockEnd:
		b := blockOf(c.Block)
		bt := ""
		if b != nil {
			bt = b.Type
		}
		if p := a.ensure(idx, bt); p.block == nil {
			p.block = b
		}
	case llm.UsageChunk:
		a.usage = nil
		if present(c.Usage) {
			a.usage = reorder(c.Usage)
		}
	case llm.FinishChunk:
		a.finish = nil
		if isObject(c.Reason) {
			a.finish = &finishReason{}
			readMembers(c.Reason, a.finish)
		}
	}
}

// blockOf reads a block-end's block (nil when it is not an object).
func blockOf(raw json.RawMessage) *replyBlock {
	if !isObject(raw) {
		return nil
	}
	b := &replyBlock{json: reorder(raw)}
	readMembers(raw, b)
	return b
}

func (a *assembler) ensure(idx int, blockType string) *partialBlock {
	p, ok := a.partials[idx]
	if !ok {
		p = &partialBlock{blockType: blockType}
		a.partials[idx] = p
		a.order = append(a.order, idx)
	}
	return p
}

// finishKind is the finish reason's kind ("stop" without a finish chunk).
func (a *assembler) finishKind() string {
	if a.finish == nil {
		return llm.Stop
	}
	return a.finish.Kind
}

// failure is an error or aborted finish's failure as the model reported
// it ({} when it reported none); readable is false when one of its fields
// has another type than upstream's.
func (a *assembler) failure() (f *session.Failure, readable bool) {
	raw := json.RawMessage("{}")
	if a.finish != nil && isObject(a.finish.Failure) {
		raw = reorder(a.finish.Failure)
	}
	return session.ReportedFailure(raw)
}

// blocks are the message's blocks (max-tokens drops the tool calls).
func (a *assembler) blocks() []replyBlock {
	out := make([]replyBlock, 0, len(a.order))
	for _, idx := range a.order {
		b := a.partials[idx].assemble(idx)
		if a.finishKind() == llm.MaxTokens && b.Type == llm.ToolCall {
			continue
		}
		out = append(out, b)
	}
	return out
}

// interrupted are the blocks a cancelled stream keeps: its text and
// reasoning blocks with non-blank text.
func (a *assembler) interrupted() []replyBlock {
	var out []replyBlock
	for _, idx := range a.order {
		b := a.partials[idx].assemble(idx)
		if (b.Type == llm.Text || b.Type == llm.Reasoning) && strings.TrimSpace(b.Text) != "" {
			out = append(out, b)
		}
	}
	return out
}

func (p *partialBlock) assemble(idx int) replyBlock {
	if p.block != nil {
		return *p.block
	}
	b := replyBlock{Type: p.blockType}
	if p.blockType == llm.ToolCall {
		b.ID, b.Name, b.Arguments = p.id, p.name, p.args.String()
		if b.ID == "" {
			b.ID = "call-" + jsonInt(idx)
		}
		b.json, _ = json.Marshal(struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{b.Type, b.ID, b.Name, b.Arguments})
		return b
	}
	b.Text = p.text.String()
	b.json, _ = json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{b.Type, b.Text})
	return b
}

// readMembers decodes the JSON object raw into the struct v points to,
// member by member and by exact key, as upstream's JavaScript reads them
// (encoding/json would also take "Type" for "type"); a member of another
// type than its field reads as empty, as a missing one does.
func readMembers(raw json.RawMessage, v any) {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return
	}
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		if m, ok := members[name]; ok && name != "" {
			_ = json.Unmarshal(m, rv.Field(i).Addr().Interface())
		}
	}
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool { return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) }

// present reports whether raw holds a value (not absent, not null).
func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

func jsonInt(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
