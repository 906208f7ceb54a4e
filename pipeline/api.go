package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Block is one model-facing content block: a text block
// {"type":"text","text"} or an image block {"type":"image","attachment"}
// whose attachment reference is kept as its producer wrote it (upstream's
// read_image and prompt admission order its keys differently).
type Block struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// Attachment is the attachment reference of an image block (nil for text).
	Attachment json.RawMessage `json:"attachment,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: "text", Text: s} }

// ImageBlock returns an image block carrying an attachment reference.
func ImageBlock(attachment json.RawMessage) Block {
	return Block{Type: "image", Attachment: append(json.RawMessage(nil), attachment...)}
}

// MarshalJSON writes a text block as {"type","text"} and an image block as
// {"type","attachment"}, as upstream's log stores them.
// Text is written unescaped (no \u003c for "<"), as an encoder that does
// not escape HTML would write it.
func (b Block) MarshalJSON() ([]byte, error) {
	var v any = struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{b.Type, b.Text}
	if b.Type == "image" {
		v = struct {
			Type       string          `json:"type"`
			Attachment json.RawMessage `json:"attachment"`
		}{b.Type, b.Attachment}
	}
	return jsjson.Marshal(v)
}

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
	IsError bool            `json:"isError"`
	Value   json.RawMessage `json:"value,omitempty"`
	Content []Block         `json:"content"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	Error   *ResultError    `json:"error,omitempty"`
	// ContextMessages are attributed context messages for the model's next
	// step (upstream's additionalContexts: a block keeps only its own, an
	// accept appends, a cancellation keeps them).
	ContextMessages []ContextMessage `json:"contextMessages,omitempty"`
	ConcludesTurn   bool             `json:"concludesTurn,omitempty"`
	// Sandbox is the body's [Output.Sandbox], kept beside the value.
	Sandbox json.RawMessage `json:"-"`
}

// ContextMessage is a user message a post-execute listener adds for the
// model's next step, attributed to the plugin that wrote it (upstream's
// additionalContexts entries): one text block per entry of Texts, or the
// blocks of Content when it is set (run_code hands a nested call's image on
// so: its text and image blocks).
type ContextMessage struct {
	// Plugin names the source, e.g. "hooks-claude-code".
	Plugin string `json:"plugin"`
	// Texts are the message's text blocks, in order.
	Texts []string `json:"texts"`
	// Content, when set, is the message's blocks in place of Texts.
	Content []Block `json:"content,omitempty"`
	// Form and Summary, when set, join the message's source: a notice
	// (form "notice") says in its summary what it is about.
	Form    string `json:"form,omitempty"`
	Summary string `json:"summary,omitempty"`
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

// --8<-- [start:identity]
// Call is one execution of a tool as every stage sees it. Its identity (call
// id, root call id, tool name, agent, parent, the caller's signal) and its
// arguments are fixed when it is made and are read through getters only, so
// no stage can show a later stage another agent, another name or other
// arguments (upstream reads each input field once and freezes the
// arguments). The *Call itself is the execution's token: the same pointer
// reaches every stage, and a call runs once.
type Call struct {
	callID, rootCallID, name string
	agent                    *Agent
	parent                   *Call
	signal                   context.Context
	args                     json.RawMessage
	executed                 atomic.Bool // set by the one Execute a call gets
}

// --8<-- [end:identity]

// NewCall returns a top-level call: its root call id is callID, its arguments
// a detached copy of args, and signal (nil: never cancelled) is the caller's
// cancellation.
func NewCall(callID, name string, args json.RawMessage, agent *Agent, signal context.Context) *Call {
	if signal == nil {
		signal = context.Background()
	}
	return &Call{callID: callID, rootCallID: callID, name: name, agent: agent, signal: signal, args: append(json.RawMessage(nil), args...)}
}

// NewSubCall returns a call nested in outer (a Code Mode sub-call): it runs
// for outer's agent, keeps outer's root call id, and has outer as parent.
// A nil outer makes a top-level call.
func NewSubCall(outer *Call, callID, name string, args json.RawMessage, signal context.Context) *Call {
	if outer == nil {
		return NewCall(callID, name, args, nil, signal)
	}
	c := NewCall(callID, name, args, outer.agent, signal)
	c.rootCallID, c.parent = outer.rootCallID, outer
	return c
}

// CallID returns the model's call id.
func (c *Call) CallID() string { return c.callID }

// RootCallID returns the call id of the top-level call this one descends from
// (its own id at top level).
func (c *Call) RootCallID() string { return c.rootCallID }

// Name returns the tool name as the model called it.
func (c *Call) Name() string { return c.name }

// Agent returns the agent the call runs for, nil for an agentless call.
func (c *Call) Agent() *Agent { return c.agent }

// Parent returns the enclosing call of a nested call, nil at top level.
func (c *Call) Parent() *Call { return c.parent }

// Signal returns the caller's cancellation. Stages get their own context as
// a parameter; a wrapper may pass another one on, never detached from this.
func (c *Call) Signal() context.Context { return c.signal }

// Args returns a copy of the frozen arguments.
func (c *Call) Args() json.RawMessage { return append(json.RawMessage(nil), c.args...) }

// DecodeArgs decodes the frozen arguments into v.
func (c *Call) DecodeArgs(v any) error { return json.Unmarshal(c.args, v) }

// SessionID returns the agent's session id, or "" for agentless calls.
func (c *Call) SessionID() string {
	if c.agent == nil || c.agent.Session == nil {
		return ""
	}
	return c.agent.Session.ID()
}

// Output is what a tool body returns on success.
type Output struct {
	// Value is the canonical JSON value (optional).
	Value json.RawMessage
	// Content is the model-facing content.
	Content []Block
	// Meta is the persisted presentation meta (optional).
	Meta json.RawMessage
	// ContextMessages are attributed context messages for the model's next
	// step (run_code forwards its nested calls' here); a failing body keeps
	// them by returning an error that implements [ContextCarrier].
	ContextMessages []ContextMessage
	// ConcludesTurn ends the agent's turn once the step's calls are done
	// (upstream's exec.concludeTurn(): structured_output).
	ConcludesTurn bool
	// Sandbox is the sandbox facts of the run the body made (a
	// sandbox.Facts as JSON: mode, backend, enforcement, what it cannot
	// govern), for the session log and the caller, never for the model: the
	// value keeps upstream's shape (a program may return it whole). Ours;
	// bash and run_code set it for a confined run.
	Sandbox json.RawMessage
}

// ContextCarrier is implemented by a tool error that keeps attributed
// context messages on the failure result (run_code: the messages of nested
// calls, a hook's among them, survive a later program failure).
type ContextCarrier interface {
	ContextMessages() []ContextMessage
}

// Tool is a registered tool definition.
type Tool struct {
	// Name is the model-facing tool name.
	Name string
	// Description is the model-facing description.
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage
	// ArgsRoot names the arguments in the schema check's violations (""
	// is the registry's check, `"arguments"`); a tool whose body checks a
	// raw schema itself upstream names them "value" (structured_output).
	ArgsRoot string
	// OutputSchema is the JSON Schema of the canonical value (Output.Value)
	// the tool returns on success; nil when not declared. run_code's SDK
	// declares it as the tool's result type.
	OutputSchema json.RawMessage
	// Run is the tool body. A returned error becomes "Error: <message>" with
	// {name, code} info when the error is coded (see [CodeOf]).
	Run func(ctx context.Context, call *Call) (Output, error)
	// ConcurrencySafe lets an agent loop run consecutive calls of such tools
	// in one parallel pool, and run_code's scheduler overlap them
	// (upstream's isConcurrencySafe: read and the like; no tool here answers
	// by its arguments, but a call its schema refuses runs alone: see
	// [RunsBeside]); every other tool is a barrier that runs alone.
	ConcurrencySafe bool
}
