package deepseek

import (
	"encoding/json"
	"strings"

	"github.com/dshsim/dshsim/internal/jstext"
	"github.com/dshsim/dshsim/llm"
)

// Translator turns the data payloads of one stream into chunks.
type Translator struct {
	next      int
	text      *block
	reasoning *block
	tools     map[int]*block
	order     []*block
	finish    *llm.Finish
	usage     *llm.Usage
}

type block struct {
	index     int
	kind      string
	text      strings.Builder
	id, name  string
	idKnown   bool
	nameKnown bool
}

// wireChunk is the part of a streamed chat-completion chunk that is read.
type wireChunk struct {
	Choices []struct {
		Delta *struct {
			ReasoningContent *string `json:"reasoning_content"`
			Content          *string `json:"content"`
			ToolCalls        []struct {
				Index    int     `json:"index"`
				ID       *string `json:"id"`
				Function *struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
}

type wireUsage struct {
	PromptTokens        int  `json:"prompt_tokens"`
	CompletionTokens    int  `json:"completion_tokens"`
	PromptCacheHit      *int `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (t *Translator) open(kind string) (*block, llm.Chunk) {
	b := &block{index: t.next, kind: kind}
	t.next++
	t.order = append(t.order, b)
	return b, llm.Chunk{Type: llm.BlockStart, Index: b.index, BlockType: kind}
}

// textDelta appends to out the chunks of a non-empty text or reasoning
// delta: its block's start when *b is not open yet (it opens it, of kind),
// then the delta (of type typ).
func (t *Translator) textDelta(out []llm.Chunk, b **block, kind, typ string, text *string) []llm.Chunk {
	if text == nil || *text == "" {
		return out
	}
	if *b == nil {
		var start llm.Chunk
		*b, start = t.open(kind)
		out = append(out, start)
	}
	(*b).text.WriteString(*text)
	return append(out, llm.Chunk{Type: typ, Index: (*b).index, Text: *text})
}

// Feed translates one data payload (not [DONE]); a payload that is not JSON
// is the MALFORMED_RESPONSE failure.
func (t *Translator) Feed(payload string) ([]llm.Chunk, error) {
	var c wireChunk
	if err := json.Unmarshal([]byte(payload), &c); err != nil {
		return nil, &llm.Failure{Message: "malformed SSE payload: " + jstext.Head(payload, 120), Code: "MALFORMED_RESPONSE"}
	}
	var out []llm.Chunk
	for _, ch := range c.Choices {
		if d := ch.Delta; d != nil {
			out = t.textDelta(out, &t.reasoning, llm.Reasoning, llm.ReasoningDelta, d.ReasoningContent)
			out = t.textDelta(out, &t.text, llm.Text, llm.TextDelta, d.Content)
			for _, call := range d.ToolCalls {
				out = append(out, t.toolDelta(call.Index, call.ID, call.Function)...)
			}
		}
		if ch.FinishReason != nil {
			t.finish = finishReason(*ch.FinishReason)
		}
	}
	if c.Usage != nil {
		t.usage = usage(c.Usage)
	}
	return out, nil
}

func (t *Translator) toolDelta(wire int, id *string, fn *struct {
	Name      *string `json:"name"`
	Arguments *string `json:"arguments"`
}) []llm.Chunk {
	var out []llm.Chunk
	if t.tools == nil {
		t.tools = map[int]*block{}
	}
	b := t.tools[wire]
	if b == nil {
		var start llm.Chunk
		b, start = t.open(llm.ToolCall)
		t.tools[wire] = b
		out = append(out, start)
	}
	if id != nil {
		b.id, b.idKnown = *id, true
	}
	fragment := ""
	if fn != nil {
		if fn.Name != nil {
			b.name, b.nameKnown = *fn.Name, true
		}
		if fn.Arguments != nil {
			fragment = *fn.Arguments
		}
	}
	b.text.WriteString(fragment)
	c := llm.Chunk{Type: llm.ToolCallDelta, Index: b.index, ID: b.id, ArgumentsDelta: fragment}
	if b.nameKnown {
		name := b.name
		c.Name = &name
	}
	return append(out, c)
}

// Done is what [DONE] ends the stream with: every block's end in opening
// order, the usage when reported, and the finish (a stop with no block is
// the EMPTY_RESPONSE failure).
func (t *Translator) Done() []llm.Chunk {
	var out []llm.Chunk
	for _, b := range t.order {
		blk := &llm.Block{Type: b.kind, Text: b.text.String()}
		if b.kind == llm.ToolCall {
			blk = &llm.Block{Type: llm.ToolCall, ID: b.id, Name: b.name, Arguments: b.text.String()}
		}
		out = append(out, llm.Chunk{Type: llm.BlockEnd, Index: b.index, Block: blk})
	}
	if t.usage != nil {
		out = append(out, llm.Chunk{Type: llm.UsageChunk, Usage: t.usage})
	}
	reason := t.finish
	if reason == nil {
		reason = &llm.Finish{Kind: llm.Stop}
	}
	if reason.Kind == llm.Stop && len(t.order) == 0 {
		reason = &llm.Finish{Kind: llm.Error, Failure: &llm.Failure{Message: "model returned a completed response with no content", Code: "EMPTY_RESPONSE"}}
	}
	return append(out, llm.Chunk{Type: llm.FinishChunk, Reason: reason})
}

// finishReason maps the wire finish_reason.
func finishReason(r string) *llm.Finish {
	switch r {
	case "stop":
		return &llm.Finish{Kind: llm.Stop}
	case "tool_calls":
		return &llm.Finish{Kind: llm.ToolCalls}
	case "length":
		return &llm.Finish{Kind: llm.MaxTokens}
	}
	return &llm.Finish{Kind: llm.Error, Failure: &llm.Failure{Message: "model stopped: " + r, Code: strings.ToUpper(r)}}
}

// usage maps the wire usage to disjoint counts: cache reads come out of
// the prompt tokens.
func usage(u *wireUsage) *llm.Usage {
	var cache *int
	if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil {
		cache = u.PromptTokensDetails.CachedTokens
	} else if u.PromptCacheHit != nil {
		cache = u.PromptCacheHit
	}
	out := &llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CacheReadTokens: cache}
	if cache != nil {
		out.InputTokens -= *cache
	}
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}
