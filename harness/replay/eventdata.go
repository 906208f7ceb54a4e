package replay

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
)

// The data of the events our driver writes, in upstream's key order: the
// session log is read back by the model (session_event_read prints an event
// as stored), so the order is part of what the model sees.

type kindOnly struct {
	Kind string `json:"kind"`
}

type userMessage struct {
	// Content holds the blocks (pipeline.Block, or a relayed message's
	// blocks as they are).
	Content []any  `json:"content"`
	Source  any    `json:"source"`
	Role    string `json:"role"`
	ID      string `json:"id"`
}

type splice struct {
	Target       string        `json:"target"`
	Start        int           `json:"start"`
	RemovedCount *int          `json:"removedCount,omitempty"`
	Inserted     []userMessage `json:"inserted"`
}

type turnData struct {
	Turn int `json:"turn"`
}

type stepData struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

type turnEndData struct {
	Turn   int       `json:"turn"`
	Reason reasonMap `json:"reason"`
}

// reasonMap is a turn/end reason (and its nested objects) marshalled in
// upstream's key order: kind, reason, name, message, code, error, then
// any other key by name ({kind, error: {message, code}} as upstream's
// loop writes a failed turn, not Go's sorted keys).
type reasonMap map[string]any

var reasonOrder = []string{"kind", "reason", "name", "message", "code", "error"}

func (m reasonMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	writeOrderedBy(&b, map[string]any(m), reasonOrder)
	return b.Bytes(), nil
}

type titleData struct {
	Title       string   `json:"title"`
	MessageSeqs []int64  `json:"messageSeqs"`
	Source      kindOnly `json:"source"`
}

type headerData struct {
	Header struct {
		Config json.RawMessage `json:"config"`
		System string          `json:"system"`
		Tools  []any           `json:"tools"`
	} `json:"header"`
	Reason string `json:"reason"`
}

type requestContext struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

type retryData struct {
	RetryID    string          `json:"retryId"`
	Turn       int             `json:"turn"`
	Step       int             `json:"step"`
	Provider   string          `json:"provider"`
	Mode       string          `json:"mode"`
	PolicyKey  string          `json:"policyKey"`
	Retry      int             `json:"retry"`
	MaxRetries *int            `json:"maxRetries,omitempty"`
	DelayMs    float64         `json:"delayMs"`
	Failure    json.RawMessage `json:"failure"`
}

type retryStartedData struct {
	RetryID string `json:"retryId"`
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
	Retry   int    `json:"retry"`
}

type chunkData struct {
	Turn  int             `json:"turn"`
	Step  int             `json:"step"`
	Chunk json.RawMessage `json:"chunk"`
}

type modelSource struct {
	Kind     string `json:"kind"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

type assistantBody struct {
	Role    string      `json:"role"`
	Content []any       `json:"content"`
	Source  modelSource `json:"source"`
	ID      string      `json:"id"`
}

type assistantData struct {
	Turn        int             `json:"turn"`
	Step        int             `json:"step"`
	Message     assistantBody   `json:"message"`
	Usage       json.RawMessage `json:"usage,omitempty"`
	Interrupted bool            `json:"interrupted,omitempty"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolCallBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolCallData struct {
	Turn      int    `json:"turn"`
	Step      int    `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolSource struct {
	Kind   string `json:"kind"`
	CallID string `json:"callId"`
}

type toolResultBlock struct {
	Type       string           `json:"type"`
	ToolCallID string           `json:"toolCallId"`
	Content    []pipeline.Block `json:"content"`
	IsError    bool             `json:"isError"`
}

type toolResultMessage struct {
	Source  toolSource        `json:"source"`
	Content []toolResultBlock `json:"content"`
	Role    string            `json:"role"`
	ID      string            `json:"id"`
}

type toolResultData struct {
	Turn    int                 `json:"turn"`
	Step    int                 `json:"step"`
	Message toolResultMessage   `json:"message"`
	Error   *pipeline.ErrorInfo `json:"error,omitempty"`
	Meta    json.RawMessage     `json:"meta,omitempty"`
	// Sandbox is the sandbox facts of the call's run (bash's, run_code's:
	// pipeline.Result.Sandbox): the backend that ran and what it cannot
	// govern. Ours; the projection does not compare it.
	Sandbox *sandbox.Facts `json:"sandbox,omitempty"`
}

// keyOrder is upstream's key order of model chunks and usage objects.
var keyOrder = []string{"type", "index", "blockType", "id", "name", "text", "argumentsDelta", "arguments", "block", "usage", "reason", "kind",
	"failure", "message", "code", "status", "providerRetryAfterMs", "requestId",
	"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"}

// ordered encodes a decoded JSON value with object keys in upstream's order
// (keys it does not know follow, sorted).
func ordered(v any) json.RawMessage {
	var b bytes.Buffer
	writeOrdered(&b, v)
	return b.Bytes()
}

func writeOrdered(b *bytes.Buffer, v any) { writeOrderedBy(b, v, keyOrder) }

// writeOrderedBy encodes v with object keys in order's order (keys it does
// not list follow, sorted), nested objects too.
func writeOrderedBy(b *bytes.Buffer, v any, order []string) {
	switch t := v.(type) {
	case reasonMap:
		writeOrderedBy(b, map[string]any(t), order)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.SliceStable(keys, func(i, j int) bool {
			a, c := slices.Index(order, keys[i]), slices.Index(order, keys[j])
			switch {
			case a >= 0 && c >= 0:
				return a < c
			case a >= 0 || c >= 0:
				return a >= 0
			}
			return keys[i] < keys[j]
		})
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			writeOrderedBy(b, t[k], order)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			writeOrderedBy(b, e, order)
		}
		b.WriteByte(']')
	default:
		e, _ := json.Marshal(t)
		b.Write(e)
	}
}
