package subagent

import (
	"context"
	"encoding/json"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/sandbox"
)

// Request is one delegation as a tool asks for it.
type Request struct {
	// Caller is the delegating agent (the calling agent of the tool).
	Caller *pipeline.Agent
	// CallID is the delegating tool call's id (reports nest the child
	// under it).
	CallID string
	// Label is the descriptor's label (the call's description; "" for a
	// workflow child).
	Label string
	// Prompt is the child's first message.
	Prompt string
	// MaxDepth caps the child's delegation depth (nil: the provider
	// manages it).
	MaxDepth *int
	// ToolFilter and Persona are the instance's, applied in the child's
	// creation window.
	ToolFilter *pipeline.Filter
	Persona    string
	// ReadOnly makes the child a workflow step restricted to read-only
	// tools (our extension), named StepLabel in its denials.
	ReadOnly  bool
	StepLabel string
	// Sandbox is the instance's narrower sandbox mode for its children
	// (our extension; "": they inherit).
	Sandbox sandbox.Mode
	// OutputSchema makes a structured child (a workflow agent() with a
	// schema): its own structured_output tool takes the schema, and its
	// result is what that tool recorded (nil: none).
	OutputSchema json.RawMessage
}

// Result is a one-shot run's result: how it stopped, its selected output
// (blocks as they are), and a provider's diagnostic.
type Result struct {
	Stop       delegation.StopReason
	Output     []json.RawMessage
	Diagnostic string
	// Structured is what a structured child recorded (nil: nothing).
	Structured json.RawMessage
}

// Run is one started one-shot child, held by its caller until disposed.
type Run interface {
	// ID is the child's session id.
	ID() string
	// Done is closed once the result is ready.
	Done() <-chan struct{}
	// Result waits for the result; an error is a run that failed outright
	// (its message is the failure's).
	Result(ctx context.Context) (Result, error)
	// Dispose releases the child (quiescent teardown).
	Dispose() error
}

// ProviderInfo is what a tool instance needs to know of its provider.
type ProviderInfo struct {
	// InheritsContext: the child sees the parent's completed turns (a
	// fork); it selects the wording.
	InheritsContext bool
	// DepthLimit: the provider can enforce maxDepth.
	DepthLimit bool
	// Continuable: the provider can start continuable children.
	Continuable bool
}

// Entry is one row of list_agents.
type Entry struct {
	// ID is the child's session id.
	ID string
	// Diagnostic is set ("corrupt", "unsupported", "unavailable") for a
	// child that could not be read; the other fields but ID are then empty.
	Diagnostic string
	// Continuable: only continuable children are listed.
	Continuable bool
	// Label is the descriptor's label; Status running, idle or ready.
	Label, Status string
	// Parent and Depth position the entry below the caller (descendants).
	Parent string
	Depth  int
}

// Service is the delegation runtime the tools stand on (the composition's:
// package stack). Errors are the tools' failures as they are (coded ones
// carry their name and code).
type Service interface {
	// Provider describes the provider named name.
	Provider(name string) (ProviderInfo, bool)
	// Start starts a one-shot child of req.Caller; ctx cancels the run.
	Start(ctx context.Context, provider string, req Request) (Run, error)
	// StartContinuable starts a continuable child and returns its id once
	// its inbox accepted the prompt.
	StartContinuable(ctx context.Context, provider string, req Request) (string, error)
	// Followup queues message as a later turn of the caller's child and
	// returns the message id.
	Followup(ctx context.Context, caller *pipeline.Agent, childID, message string) (string, error)
	// Interrupt cancels the current turn of a live descendant of caller
	// (an accepted no-op for one that is not running).
	Interrupt(caller *pipeline.Agent, targetID string) error
	// List lists the caller's children, or every descendant in pre-order.
	List(ctx context.Context, caller *pipeline.Agent, descendants bool) ([]Entry, error)
	// Report relays output from the calling continuable child to its
	// direct parent and returns the relayed message's id.
	Report(ctx context.Context, caller *pipeline.Agent, output string) (string, error)
}
