package llm

import (
	"fmt"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// Chunk types.
const (
	BlockStart     = "block-start"
	TextDelta      = "text-delta"
	ReasoningDelta = "reasoning-delta"
	ToolCallDelta  = "tool-call-delta"
	BlockEnd       = "block-end"
	UsageChunk     = "usage"
	FinishChunk    = "finish"
)

// Block types.
const (
	Text       = "text"
	Reasoning  = "reasoning"
	ToolCall   = "tool-call"
	ToolResult = "tool-result"
)

// Chunk is one streamed piece of a reply. Which fields are set depends on
// Type; MarshalJSON writes upstream's fields in upstream's order.
type Chunk struct {
	// Type is one of the chunk type constants.
	Type string
	// Index is the block index (every type but usage and finish).
	Index int
	// BlockType is the opened block's type (block-start).
	BlockType string
	// Text is the fragment of a text-delta or reasoning-delta.
	Text string
	// ID is the tool call id known so far, "" before it (tool-call-delta).
	ID string
	// Name is the tool name once known (tool-call-delta); nil before.
	Name *string
	// ArgumentsDelta is the arguments fragment, possibly "" (tool-call-delta).
	ArgumentsDelta string
	// Block is the finished block (block-end).
	Block *Block
	// Usage is the call's token usage (usage).
	Usage *Usage
	// Reason is how the reply ended (finish).
	Reason *Finish
}

// MarshalJSON writes the chunk as upstream logs it, e.g.
// {"type":"tool-call-delta","index":1,"id":"call_0","name":"bash","argumentsDelta":"{"}.
func (c Chunk) MarshalJSON() ([]byte, error) {
	var v any
	switch c.Type {
	case BlockStart:
		v = struct {
			Type      string `json:"type"`
			Index     int    `json:"index"`
			BlockType string `json:"blockType"`
		}{c.Type, c.Index, c.BlockType}
	case TextDelta, ReasoningDelta:
		v = struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
			Text  string `json:"text"`
		}{c.Type, c.Index, c.Text}
	case ToolCallDelta:
		v = struct {
			Type           string  `json:"type"`
			Index          int     `json:"index"`
			ID             string  `json:"id"`
			Name           *string `json:"name,omitempty"`
			ArgumentsDelta string  `json:"argumentsDelta"`
		}{c.Type, c.Index, c.ID, c.Name, c.ArgumentsDelta}
	case BlockEnd:
		if c.Block == nil {
			return nil, fmt.Errorf("llm: a block-end chunk without its block")
		}
		v = struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
			Block *Block `json:"block"`
		}{c.Type, c.Index, c.Block}
	case UsageChunk:
		if c.Usage == nil {
			return nil, fmt.Errorf("llm: a usage chunk without usage")
		}
		v = struct {
			Type  string `json:"type"`
			Usage *Usage `json:"usage"`
		}{c.Type, c.Usage}
	case FinishChunk:
		if c.Reason == nil {
			return nil, fmt.Errorf("llm: a finish chunk without its reason")
		}
		v = struct {
			Type   string  `json:"type"`
			Reason *Finish `json:"reason"`
		}{c.Type, c.Reason}
	default:
		return nil, fmt.Errorf("llm: unknown chunk type %q", c.Type)
	}
	return jsjson.Marshal(v)
}

// Block is one content block: of a finished reply (text, reasoning,
// tool-call) or of a conversation message (also tool-result).
type Block struct {
	// Type is text, reasoning, tool-call or tool-result.
	Type string
	// Text is the text of a text or reasoning block.
	Text string
	// ID, Name and Arguments (the raw JSON string) are a tool call's.
	ID, Name, Arguments string
	// ToolCallID, Content and IsError are a tool result's.
	ToolCallID string
	Content    []Block
	IsError    bool
}

// MarshalJSON writes a reply block as upstream's block-end carries it:
// {"type","text"} or {"type","id","name","arguments"}.
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case Text, Reasoning:
		return jsjson.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text})
	case ToolCall:
		return jsjson.Marshal(struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{b.Type, b.ID, b.Name, b.Arguments})
	}
	return nil, fmt.Errorf("llm: block type %q is not a reply block", b.Type)
}

// Usage is a call's token usage in upstream's disjoint counts.
type Usage struct {
	InputTokens     int  `json:"inputTokens"`
	OutputTokens    int  `json:"outputTokens"`
	CacheReadTokens *int `json:"cacheReadTokens,omitempty"`
	ReasoningTokens *int `json:"reasoningTokens,omitempty"`
}

// Finish kinds.
const (
	Stop      = "stop"
	ToolCalls = "tool-calls"
	MaxTokens = "max-tokens"
	Error     = "error"
	Aborted   = "aborted" // a call its caller cancelled
)

// Finish is a finish chunk's reason: its kind, and the failure of an error.
type Finish struct {
	Kind    string   `json:"kind"`
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is a failed model call as upstream logs it.
type Failure struct {
	// Message says what failed; Code classifies it (AUTH, RATE_LIMIT, SERVER,
	// TRANSPORT, STREAM_CLOSED, MALFORMED_RESPONSE, EMPTY_RESPONSE, ...).
	Message string `json:"message"`
	Code    string `json:"code"`
	// Status is the HTTP status of an HTTP error (0: none).
	Status int `json:"status,omitempty"`
	// ProviderRetryAfterMs is the provider's Retry-After in ms (0: none);
	// any JSON number, as upstream reads it (a fraction is a delay too).
	ProviderRetryAfterMs float64 `json:"providerRetryAfterMs,omitempty"`
	// RequestID is the provider's request id of an HTTP error.
	RequestID string `json:"requestId,omitempty"`
}

func (f *Failure) Error() string { return f.Message + " (" + f.Code + ")" }
