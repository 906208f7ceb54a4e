package replay

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"

	"github.com/dshsim/dshsim/pipeline"
)

// The data of the events only the replay's agent loop writes, in
// upstream's key order (the session log is read back by the model:
// session_event_read prints an event as stored). The events the runtime
// reads back too have their data in package session (turns, steps, a
// turn's end, retries, tool calls, the model's chunks and messages) and in
// package pipeline (user messages, tool results).

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
	pipeline.UserMessage[any]
	kind    string
	relayed []json.RawMessage
}

// newUserMessage is a new message (role user, a fresh id) of source kind
// kind.
func newUserMessage(kind string, source any, content []pipeline.Block) userMessage {
	return enteredMessage(kind, source, content, newUUID())
}

// enteredMessage is the message id of source kind kind that another part
// made (the runtime context, the skill catalog).
func enteredMessage(kind string, source any, content []pipeline.Block, id string) userMessage {
	return userMessage{UserMessage: pipeline.UserMessage[any]{Content: content, Source: source, Role: "user", ID: id}, kind: kind}
}

// MarshalJSON writes the message as upstream stores it (a relayed
// message's blocks as they came).
func (m userMessage) MarshalJSON() ([]byte, error) {
	if m.relayed == nil {
		return json.Marshal(m.UserMessage)
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

type headerData struct {
	Header struct {
		Config json.RawMessage   `json:"config"`
		System string            `json:"system"`
		Tools  []json.RawMessage `json:"tools"`
	} `json:"header"`
	Reason string `json:"reason"`
}

// keyOrder is upstream's key order of model chunks, usage objects, turn-end
// reasons and LLM failures.
var keyOrder = []string{"type", "index", "blockType", "id", "name", "text", "argumentsDelta", "arguments", "block", "usage", "reason", "kind",
	"failure", "message", "code", "status", "providerRetryAfterMs", "requestId",
	"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"}

// reorder rewrites a JSON value (passing through unread: a model's chunk,
// block, usage or failure) with object keys in upstream's order.
func reorder(raw json.RawMessage) json.RawMessage {
	var v any
	_ = json.Unmarshal(raw, &v)
	return ordered(v)
}

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
