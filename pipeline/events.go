package pipeline

import "encoding/json"

// The data of the session events made of the pipeline's blocks, in
// upstream's key order (the others are in package session, beside the
// event kinds).

// UserMessage is user/message's data: a message entered into the
// conversation. S is its source's type: a prompt's {kind: user}, a
// plugin's context message, the runtime-context snapshot, the skill
// catalog, a notice.
type UserMessage[S any] struct {
	Content []Block `json:"content"`
	Source  S       `json:"source"`
	Role    string  `json:"role"`
	ID      string  `json:"id"`
}

// ToolResultEvent is tool/result's data: one call's result as the model
// reads it (a user message of one tool-result block), its error's name and
// code, its meta, and the sandbox facts of its run (ours: the backend that
// ran and what it cannot govern; what shows an event as upstream logs it
// leaves them out).
type ToolResultEvent struct {
	Turn    int               `json:"turn"`
	Step    int               `json:"step"`
	Message ToolResultMessage `json:"message"`
	Error   *ErrorInfo        `json:"error,omitempty"`
	Meta    json.RawMessage   `json:"meta,omitempty"`
	Sandbox json.RawMessage   `json:"sandbox,omitempty"`
}

// ToolResultMessage is a tool result's message (source {kind: tool, callId}).
type ToolResultMessage struct {
	Source  ToolSource        `json:"source"`
	Content []ToolResultBlock `json:"content"`
	Role    string            `json:"role"`
	ID      string            `json:"id"`
}

// ToolSource is a tool result message's source.
type ToolSource struct {
	Kind   string `json:"kind"`
	CallID string `json:"callId"`
}

// ToolResultBlock is a tool-result block: the call's content blocks.
type ToolResultBlock struct {
	Type       string  `json:"type"`
	ToolCallID string  `json:"toolCallId"`
	Content    []Block `json:"content"`
	IsError    bool    `json:"isError"`
}

// NewToolResultEvent is the tool/result data of call callID's result r,
// its message numbered id; sandbox is the facts of its run (nil: none).
func NewToolResultEvent(turn, step int, callID, id string, r Result, sandbox json.RawMessage) ToolResultEvent {
	content := r.Content
	if content == nil {
		content = []Block{}
	}
	e := ToolResultEvent{Turn: turn, Step: step, Meta: r.Meta, Sandbox: sandbox, Message: ToolResultMessage{
		Source:  ToolSource{Kind: "tool", CallID: callID},
		Content: []ToolResultBlock{{Type: "tool-result", ToolCallID: callID, Content: content, IsError: r.IsError}},
		Role:    "user", ID: id,
	}}
	if r.Error != nil {
		e.Error = r.Error.Info
	}
	return e
}
