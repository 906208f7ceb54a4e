package llm

import "encoding/json"

// Roles of a conversation message.
const (
	User      = "user"
	Assistant = "assistant"
)

// Message is one message of the conversation a request carries: a user
// message (text, and tool-result blocks), or an assistant message (text,
// reasoning and tool-call blocks).
type Message struct {
	Role    string
	Content []Block
}

// Tool is a tool the model is offered.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage
}
