package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshsim/dshsim/pipeline/session"
)

// Block is one model-facing content block.
type Block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: "text", Text: s} }

// ErrorInfo is the structured {name, code} of a coded error.
type ErrorInfo struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// ResultError is the error part of a failed result.
type ResultError struct {
	// Message is the message without the "Error: " prefix.
	Message string `json:"message"`
	// Info is set only when the error carried a code.
	Info *ErrorInfo `json:"info,omitempty"`
}

// Result is the outcome of one tool call. A success has Value and no Error; a
// failure has Error and never Value or ConcludesTurn.
type Result struct {
	IsError            bool            `json:"isError"`
	Value              json.RawMessage `json:"value,omitempty"`
	Content            []Block         `json:"content"`
	Meta               json.RawMessage `json:"meta,omitempty"`
	Error              *ResultError    `json:"error,omitempty"`
	AdditionalContexts []string        `json:"additionalContexts,omitempty"`
	ConcludesTurn      bool            `json:"concludesTurn,omitempty"`
}

// Text returns the concatenated text of the result's text blocks.
func (r Result) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// Agent is the actor a call runs for. Session is nil for an agent without a
// session. An Agent is used by pointer and never copied: its identity is its
// scope key (upstream keys scopes by the live Agent object).
type Agent struct {
	// ID names the agent in logs and messages; it is a label, not a key.
	ID string
	// Session is the agent's session log; nil when it has none.
	Session *session.Log

	scopeOnce sync.Once
	scope     Scope
}

// Scope returns the agent's own scope (nil for a nil agent). Registrations
// made through it ([Registry.In]) apply to this agent's calls and to the
// calls of agents whose scope is bound under it.
func (a *Agent) Scope() *Scope {
	if a == nil {
		return nil
	}
	a.scopeOnce.Do(func() { a.scope.agent = a })
	return &a.scope
}

// Call is one execution of a tool as every stage sees it. Its identity and its
// arguments are fixed at creation: Args returns a private copy of the frozen
// arguments, so no stage can change what the log recorded.
type Call struct {
	// CallID is the model's call id.
	CallID string
	// RootCallID defaults to CallID.
	RootCallID string
	// Name is the tool name as the model called it.
	Name string
	// Agent is nil for agentless calls.
	Agent *Agent
	// Parent marks a nested call (sub-dispatch); nil at top level.
	Parent *Call
	// Signal is the caller's cancellation.
	Signal context.Context

	args     json.RawMessage
	executed atomic.Bool // set by the one Execute a call gets
}

// NewCall returns a call whose arguments are a detached copy of args.
func NewCall(callID, name string, args json.RawMessage, agent *Agent, signal context.Context) *Call {
	if signal == nil {
		signal = context.Background()
	}
	return &Call{CallID: callID, RootCallID: callID, Name: name, Agent: agent, Signal: signal, args: append(json.RawMessage(nil), args...)}
}

// Args returns a copy of the frozen arguments.
func (c *Call) Args() json.RawMessage { return append(json.RawMessage(nil), c.args...) }

// DecodeArgs decodes the frozen arguments into v.
func (c *Call) DecodeArgs(v any) error { return json.Unmarshal(c.args, v) }

// SessionID returns the agent's session id, or "" for agentless calls.
func (c *Call) SessionID() string {
	if c.Agent == nil || c.Agent.Session == nil {
		return ""
	}
	return c.Agent.Session.ID()
}

// Output is what a tool body returns on success.
type Output struct {
	// Value is the canonical JSON value (optional).
	Value json.RawMessage
	// Content is the model-facing content.
	Content []Block
	// Meta is the persisted presentation meta (optional).
	Meta json.RawMessage
}

// Tool is a registered tool definition.
type Tool struct {
	// Name is the model-facing tool name.
	Name string
	// Description is the model-facing description.
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage
	// Run is the tool body. A returned error becomes "Error: <message>" with
	// {name, code} info when the error is coded (see [CodeOf]).
	Run func(ctx context.Context, call *Call) (Output, error)
}
