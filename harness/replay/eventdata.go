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

// userMessage is a user/message's data; kind is its source's kind (user,
// plugin, agent-instructions, or a relay's: coordinator, subagent-report,
// subagent-settled), which the agent loop reads. A message relayed from
// another agent keeps its blocks as they came (relayed: a child's closing
// blocks copied as they are, reasoning included); Content then holds
// their decoded type and text, for the hooks and the title.
type userMessage struct {
	Content []pipeline.Block `json:"content"`
	Source  any              `json:"source"`
	Role    string           `json:"role"`
	ID      string           `json:"id"`
	kind    string
	relayed []json.RawMessage
}

// MarshalJSON writes the message as upstream stores it (a relayed
// message's blocks as they came).
func (m userMessage) MarshalJSON() ([]byte, error) {
	type plain userMessage // its fields, without this method
	if m.relayed == nil {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		Content []json.RawMessage `json:"content"`
		Source  any               `json:"source"`
		Role    string            `json:"role"`
		ID      string            `json:"id"`
	}{m.relayed, m.Source, m.Role, m.ID})
}

type splice struct {
	Target       string        `json:"target"`
	Start        int           `json:"start"`
	RemovedCount *int          `json:"removedCount,omitempty"`
	Inserted     []userMessage `json:"inserted"`
	Outcome      string        `json:"outcome,omitempty"`
}

type turnData struct {
	Turn int `json:"turn"`
}

type stepData struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

type turnEndData struct {
	Turn   int `json:"turn"`
	Reason any `json:"reason"`
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

// keyOrder is upstream's key order of model chunks, usage objects, turn-end
// reasons and LLM failures.
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

func writeOrdered(b *bytes.Buffer, v any) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.SliceStable(keys, func(i, j int) bool {
			a, c := slices.Index(keyOrder, keys[i]), slices.Index(keyOrder, keys[j])
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
			writeOrdered(b, t[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			writeOrdered(b, e)
		}
		b.WriteByte(']')
	default:
		e, _ := json.Marshal(t)
		b.Write(e)
	}
}
