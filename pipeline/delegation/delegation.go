package delegation

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
)

// VERBATIM names and texts.
const (
	// Origin is the child header's origin.
	Origin = "subagent"
	// Source marks the events delegation writes.
	Source = "delegation"
	// ContextName is the runtime-context section of a delegated child.
	ContextName = "subagent:delegation"
	// ContextText is that section's text.
	ContextText = "You are a delegated subagent: your permission scope was fixed when you were started and cannot be widened from inside this session — operations that require approval are rejected automatically. When the task needs access beyond that scope, do not retry the denied operation; state the limitation in your reply so the delegating agent can handle it."
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

// ErrMaxDepth is the VERBATIM refusal of a negative or unsafe maxDepth.
var ErrMaxDepth = errors.New("subagent maxDepth must be a non-negative safe integer")

// ChildDepth returns the depth of a child of a parent at depth parentDepth
// (its header's delegationDepth): one more. maxDepth nil means no cap; a
// child deeper than the cap is refused. Errors are upstream's VERBATIM texts.
func ChildDepth(parentDepth int, maxDepth *int) (int, error) {
	d := parentDepth + 1
	if maxDepth == nil {
		return d, nil
	}
	if *maxDepth < 0 || *maxDepth > maxSafeInteger {
		return 0, ErrMaxDepth
	}
	if d > *maxDepth {
		return 0, fmt.Errorf("subagent depth %d exceeds maxDepth %d", d, *maxDepth)
	}
	return d, nil
}

// Capture is what a child inherits, read from the parent before anything
// else of the delegation happens.
type Capture struct {
	// SandboxMode is the parent's explicit override; "" when it has none.
	SandboxMode sandbox.Mode
	// PinNever is set whenever an approval service is composed.
	PinNever bool
}

// CaptureFrom reads the capture from the parent's events. A malformed
// sandbox/mode event is an error naming its seq.
func CaptureFrom(parent []session.Event, approvalComposed bool) (Capture, error) {
	mode, ok, err := policy.SessionMode(parent)
	if err != nil {
		return Capture{}, err
	}
	c := Capture{PinNever: approvalComposed}
	if ok {
		c.SandboxMode = mode
	}
	return c, nil
}

// --8<-- [start:narrow]
// modeRank orders the sandbox modes from the narrowest.
var modeRank = map[sandbox.Mode]int{sandbox.ReadOnly: 0, sandbox.WorkspaceWrite: 1, sandbox.DangerFullAccess: 2}

// Narrow narrows the capture to want (our extension: a delegation tool or
// a workflow may run its children in a narrower sandbox than their parent;
// "" keeps the capture). parent is the parent's standing mode (its
// explicit override, else the deployment's). A child can only narrow: a
// want wider than parent, or a mode either side does not know, is an
// error and no child is created. The narrowed mode is then the child's
// explicit sandbox/mode with source "delegation", as an inherited override
// is.
func Narrow(c Capture, parent, want sandbox.Mode) (Capture, error) {
	if want == "" {
		return c, nil
	}
	w, okWant := modeRank[want]
	p, okParent := modeRank[parent]
	if !okWant || !okParent || w > p {
		return Capture{}, fmt.Errorf("a delegated child can only narrow its parent's sandbox: %q is not within the parent's %q mode", want, parent)
	}
	c.SandboxMode = want
	return c, nil
}

// --8<-- [end:narrow]

// ChildHeader is the child's session header: the parent's cwd, the agent
// preset ("" leaves it out: no roster), the parent's id, origin
// "subagent", the depth, and seedLength when the log starts with a copy of
// the parent's completed turns (a fork).
func ChildHeader(id string, createdAt int64, parent session.Header, preset string, depth, seedLength int) session.Header {
	return session.Header{
		ID:              id,
		CreatedAt:       createdAt,
		Cwd:             parent.Cwd,
		AgentPreset:     preset,
		ParentSession:   parent.ID,
		SeedLength:      seedLength,
		Origin:          Origin,
		DelegationDepth: depth,
	}
}

type modeEvent struct {
	Mode   sandbox.Mode `json:"mode"`
	Source string       `json:"source"`
}

type policyEvent struct {
	Policy approval.Policy `json:"policy"`
	Source string          `json:"source"`
}

// Seed appends the capture to the child's log: sandbox/mode {mode, source}
// when a mode was captured, then approval/policy {policy: never, source}
// when pinned. It returns the appended events.
func Seed(log *session.Log, c Capture) ([]session.Event, error) {
	var out []session.Event
	if c.SandboxMode != "" {
		e, err := log.Append(session.KindSandboxMode, modeEvent{Mode: c.SandboxMode, Source: Source})
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	if c.PinNever {
		e, err := log.Append(session.KindApprovalPolicy, policyEvent{Policy: approval.Never, Source: Source})
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Section is the child's subagent:delegation runtime-context section.
func Section() policy.Section { return policy.Section{Name: ContextName, Text: ContextText} }

// Filter is the persisted form of a tool filter.
type Filter struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// FilterOf persists f (nil: none).
func FilterOf(f *pipeline.Filter) *Filter {
	if f == nil {
		return nil
	}
	return &Filter{Allow: f.Allow, Deny: f.Deny}
}

// Descriptor is the data of subagent/descriptor, in upstream's key order. A
// one-shot child's carries version, mode, provider and label only (upstream
// refuses any other key there); a continuable child's may add the route
// (agentProvider, agentModel), the persona and the tool filter, which a
// cold resume reapplies.
type Descriptor struct {
	Version       int     `json:"version"`
	Mode          string  `json:"mode"`
	Provider      string  `json:"provider"`
	Label         string  `json:"label,omitempty"`
	AgentProvider string  `json:"agentProvider,omitempty"`
	AgentModel    string  `json:"agentModel,omitempty"`
	Persona       string  `json:"persona,omitempty"`
	ToolFilter    *Filter `json:"toolFilter,omitempty"`
}

// Descriptor modes.
const (
	ModeOneShot     = "one-shot"
	ModeContinuable = "continuable"
)

// OneShotDescriptor is the descriptor a one-shot child appends inside its
// first turn (label "" leaves it out: a workflow child has none).
func OneShotDescriptor(provider, label string) Descriptor {
	return Descriptor{Version: 2, Mode: ModeOneShot, Provider: provider, Label: label}
}

// Route is the model a child is driven by (the parent's unless overridden).
type Route struct {
	Provider, Model string
}

// ContinuableDescriptor is the descriptor pre-seeded at the head of a
// continuable child's log.
func ContinuableDescriptor(provider, label string, route Route, persona string, f *pipeline.Filter) Descriptor {
	return Descriptor{Version: 2, Mode: ModeContinuable, Provider: provider, Label: label,
		AgentProvider: route.Provider, AgentModel: route.Model, Persona: persona, ToolFilter: FilterOf(f)}
}

// ReadOnlyDenial is the guard's reason when a read-only workflow step calls
// a tool outside its set (our text: upstream has no read-only step).
func ReadOnlyDenial(label, tool string, allowed []string) string {
	return fmt.Sprintf("workflow step %q is restricted to read-only tools (%s): %q is not one of them, and nothing registered later can allow it", label, strings.Join(allowed, ", "), tool)
}
