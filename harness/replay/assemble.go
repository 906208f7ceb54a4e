package replay

import (
	"encoding/json"
	"strings"
)

// assembler builds an assistant message from streamed chunks as upstream's
// block assembler does: blocks in the order their index first appeared, a
// block-end's block as given, an open block from its deltas; on a
// max-tokens finish every tool-call block is dropped (a truncated call
// cannot run safely); a stream without a finish finishes "stop".
type assembler struct {
	order    []int
	partials map[int]*partialBlock
	usage    any
	finish   map[string]any
}

type partialBlock struct {
	blockType string
	text      strings.Builder
	id, name  string
	args      strings.Builder
	block     map[string]any // set by block-end
}

func newAssembler() *assembler { return &assembler{partials: map[int]*partialBlock{}} }

// push feeds one chunk (already validated by the recording's loader).
func (a *assembler) push(c map[string]any) {
	typ, _ := c["type"].(string)
	idx := chunkIndex(c)
	switch typ {
	case "block-start":
		bt, _ := c["blockType"].(string)
		a.ensure(idx, bt)
	case "text-delta", "reasoning-delta":
		p := a.ensure(idx, strings.TrimSuffix(typ, "-delta"))
		if p.block == nil {
			t, _ := c["text"].(string)
			p.text.WriteString(t)
		}
	case "tool-call-delta":
		p := a.ensure(idx, "tool-call")
		if p.block == nil {
			p.id, _ = c["id"].(string)
			if n, _ := c["name"].(string); n != "" {
				p.name = n
			}
			d, _ := c["argumentsDelta"].(string)
			p.args.WriteString(d)
		}
	case "block-end":
		b, _ := c["block"].(map[string]any)
		bt, _ := b["type"].(string)
		if p := a.ensure(idx, bt); p.block == nil {
			p.block = b
		}
	case "usage":
		a.usage = c["usage"]
	case "finish":
		a.finish, _ = c["reason"].(map[string]any)
	}
}

func chunkIndex(c map[string]any) int {
	f, _ := c["index"].(float64)
	if i, ok := c["index"].(int); ok {
		return i
	}
	return int(f)
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
		return "stop"
	}
	k, _ := a.finish["kind"].(string)
	return k
}

// failure is an error or aborted finish's failure object.
func (a *assembler) failure() map[string]any {
	f, _ := a.finish["failure"].(map[string]any)
	return f
}

// blocks are the message's blocks (max-tokens drops the tool calls).
func (a *assembler) blocks() []map[string]any {
	out := make([]map[string]any, 0, len(a.order))
	for _, idx := range a.order {
		b := a.partials[idx].assemble(idx)
		if a.finishKind() == "max-tokens" && b["type"] == "tool-call" {
			continue
		}
		out = append(out, b)
	}
	return out
}

// interrupted are the blocks a cancelled stream keeps: its text and
// reasoning blocks with non-blank text.
func (a *assembler) interrupted() []map[string]any {
	var out []map[string]any
	for _, idx := range a.order {
		b := a.partials[idx].assemble(idx)
		if t := b["type"]; t != "text" && t != "reasoning" {
			continue
		}
		if s, _ := b["text"].(string); strings.TrimSpace(s) != "" {
			out = append(out, b)
		}
	}
	return out
}

func (p *partialBlock) assemble(idx int) map[string]any {
	if p.block != nil {
		return p.block
	}
	switch p.blockType {
	case "tool-call":
		id := p.id
		if id == "" {
			id = "call-" + jsonInt(idx)
		}
		return map[string]any{"type": "tool-call", "id": id, "name": p.name, "arguments": p.args.String()}
	default:
		return map[string]any{"type": p.blockType, "text": p.text.String()}
	}
}

func jsonInt(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
