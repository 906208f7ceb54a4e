package subagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/skill"
	"github.com/dshsim/dshsim/tools/subagent"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// ReadOnlyTools are the tools a read-only workflow step keeps (those of them
// that are registered): reading files and the output of jobs.
var ReadOnlyTools = []string{"read", "job_output", "job_list"}

// Reserved are the tool names delegation trusts ([ReadOnlyTools]) or
// registers in a child's scope (report, structured_output): a tool
// registered at run time (a dynamic Cordis package's) takes none of them.
var Reserved = slices.Concat(ReadOnlyTools, []string{subagent.ReportName, subagent.StructuredName})

// Providers of in-process children.
const (
	// ProviderSpawn starts a fresh child (its own context).
	ProviderSpawn = "spawn"
	// ProviderFork seeds the child's log with the parent's completed turns.
	ProviderFork = "fork"
)

// Delegation describes one delegated child agent (upstream's in-process
// spawn or fork, one-shot or continuable).
type Delegation struct {
	// ID is the child agent's id (a label in messages; "" is the session id).
	ID string
	// SessionID is the child session's id.
	SessionID string
	// LogPath is where the child's session log is created (absolute; the
	// file must not exist).
	LogPath string
	// Parent is the delegating agent (nil: the session's agent); its
	// session log is read for the capture, the depth and a fork's seed.
	Parent *pipeline.Agent
	// CallID is the tool call that delegates (the child is nested under it).
	CallID string
	// Provider is ProviderSpawn ("" too) or ProviderFork.
	Provider string
	// Label is the descriptor's label (a workflow step's name).
	Label string
	Continuation
	Restriction
	// OutputSchema makes a structured child: structured_output (its
	// parameters the schema) and a guard that refuses every call once it
	// recorded, both in the child's own scope (nil: none).
	OutputSchema json.RawMessage
	// Now stamps the child header (nil: time.Now).
	Now func() time.Time
}

// Continuation makes a child that takes later turns.
type Continuation struct {
	// Continuable makes a child that takes later turns: its descriptor is
	// seeded at the head of its log (with Route), and Report gives its own
	// scope the report tool.
	Continuable bool
	Route       delegation.Route
	Report      bool
	// Persona is a continuable child's persona (persisted in its
	// descriptor; the system prompt is the application's).
	Persona string
}

// Restriction narrows what a child may do.
type Restriction struct {
	// MaxDepth caps the delegation depth (nil: no cap).
	MaxDepth *int
	// ToolFilter restricts the tools the child sees (upstream's toolFilter:
	// a child-scoped tools.restrict).
	ToolFilter *pipeline.Filter
	// ReadOnly makes the child a workflow step restricted to read-only tools
	// (our extension: docs/stack.md, Following the page's description): a
	// child-scoped restriction to
	// [ReadOnlyTools] and a child-scoped guard that denies every other tool,
	// so nothing registered later can re-allow a write.
	ReadOnly bool
	// StepLabel names a read-only step in its denials ("": Label).
	StepLabel string
	// Sandbox narrows the child's sandbox mode (our extension; "": inherit
	// as upstream does). It may not be wider than the parent's standing
	// mode (its explicit override, else the deployment's): a wider one is
	// refused and no child is created ([delegation.Narrow]).
	Sandbox sandbox.Mode
}

// Child is a delegated child agent: its own session log and scope, the
// stack's tools and approval service. It is returned only once every
// registration of its setup is in place.
type Child struct {
	rt         *Runtime
	agent      *pipeline.Agent
	log        *session.Log
	info       ChildInfo
	descriptor delegation.Descriptor

	mu        sync.Mutex
	turns     int
	described bool
	ended     bool
}

// ChildInfo is what a child is, for the agent loop that drives it.
type ChildInfo struct {
	// SessionID, ParentSession and CallID place it: its id, its parent's
	// session and the parent's call that started it.
	SessionID, ParentSession, CallID string
	// Provider is spawn or fork (or an out-of-process provider's name).
	Provider string
	// Continuable: it takes later turns; Resumed: a cold resume of one.
	Continuable, Resumed bool
	// Depth is its delegation depth; SeedLength the events copied from its
	// parent (a fork).
	Depth, SeedLength int
}

// Delegate starts a child of the host's session agent (or of d.Parent), in
// upstream's order: check the depth; capture, before anything else, the
// parent's explicit sandbox override and the approval pin (never, since the
// stack always composes an approval service); create the child log (origin
// "subagent", parentSession, delegationDepth, seedLength) with its seed (a
// fork's copy of the parent's completed turns, a continuable child's
// descriptor, then session/end-seed); append sandbox/mode and
// approval/policy with source "delegation"; bind the child's scope under
// the preset's standing scope (a sibling of the parent's, so the parent's
// own registrations do not reach it); register the tool filter, the report
// tool of a continuable child and, for a read-only step, the restriction
// and the guard. Any failure rolls back: the scope ends and the log file is
// removed; no child is returned.
func (rt *Runtime) Delegate(d Delegation) (*Child, error) {
	parent := d.Parent
	if parent == nil {
		parent = rt.host.Agent()
	}
	if d.SessionID == "" {
		return nil, errors.New("stack: a delegation needs a session id")
	}
	if d.ID == "" {
		d.ID = d.SessionID
	}
	if !filepath.IsAbs(d.LogPath) {
		return nil, fmt.Errorf("stack: the child log path %q must be absolute", d.LogPath)
	}
	if parent.Session == nil {
		return nil, errors.New("stack: the delegating agent has no session")
	}
	depth, err := delegation.ChildDepth(parent.Session.Header().DelegationDepth, d.MaxDepth)
	if err != nil {
		return nil, err
	}
	events, err := parent.Session.Events()
	if err != nil {
		return nil, fmt.Errorf("stack: read the parent's log: %w", err)
	}
	capture, err := delegation.CaptureFrom(events, rt.host.ApprovalComposed())
	if err != nil {
		return nil, err
	}
	standing := capture.SandboxMode
	if standing == "" {
		standing = rt.host.DefaultMode()
	}
	if capture, err = delegation.Narrow(capture, standing, d.Sandbox); err != nil {
		return nil, err
	}
	var seed []session.Event
	if d.Provider == ProviderFork {
		seed = delegation.ForkPrefix(events)
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	h := delegation.ChildHeader(d.SessionID, now().UnixMilli(), parent.Session.Header(), rt.preset, depth, len(seed))
	log, err := session.CreateSeeded(d.LogPath, h, seed)
	if err != nil {
		return nil, err
	}
	c := &Child{rt: rt, log: log, agent: &pipeline.Agent{ID: d.ID, Session: log}, info: ChildInfo{
		SessionID: d.SessionID, ParentSession: parent.Session.ID(), CallID: d.CallID, Provider: providerOr(d.Provider),
		Continuable: d.Continuable, Depth: depth, SeedLength: len(seed)}}
	if err := c.setup(d, capture, len(seed) > 0); err != nil {
		c.agent.Scope().End()
		return nil, errors.Join(err, log.Close(), os.Remove(d.LogPath))
	}
	return c, nil
}

func providerOr(p string) string {
	if p == "" {
		return ProviderSpawn
	}
	return p
}

// setup runs while the child is unpublished.
func (c *Child) setup(d Delegation, capture delegation.Capture, seeded bool) error {
	if d.Continuable {
		c.descriptor = delegation.ContinuableDescriptor(providerOr(d.Provider), d.Label, d.Route, d.Persona, d.ToolFilter)
		if _, err := c.log.Append(session.KindSubagentDescriptor, c.descriptor); err != nil {
			return err
		}
		c.described = true
	} else {
		c.descriptor = delegation.OneShotDescriptor(providerOr(d.Provider), d.Label)
	}
	if seeded || d.Continuable {
		if _, err := c.log.Append(session.KindEndSeed, struct{}{}); err != nil {
			return err
		}
	}
	if _, err := delegation.Seed(c.log, capture); err != nil {
		return err
	}
	return c.compose(d)
}

// compose joins the child to the preset's standing scope and registers its
// own layer: the tool filter, the report tool of a continuable child, and a
// read-only step's restriction and guard.
func (c *Child) compose(d Delegation) error {
	if _, err := c.agent.Scope().Bind(c.rt.host.Standing()); err != nil {
		return err
	}
	sc := c.rt.host.In(c.agent.Scope())
	if d.ToolFilter != nil {
		if _, err := sc.Restrict(*d.ToolFilter); err != nil {
			return err
		}
	}
	if d.Continuable && d.Report && c.rt.cfg != nil {
		if err := c.rt.installReport(sc); err != nil {
			return err
		}
	}
	if d.OutputSchema != nil {
		if err := c.rt.host.RegisterIn(sc, subagent.Structured(d.OutputSchema)); err != nil {
			return err
		}
		if _, err := sc.AddGuard(c.structuredGuard); err != nil {
			return err
		}
	}
	if d.ReadOnly {
		allowed := c.readOnlyTools()
		if _, err := sc.Restrict(pipeline.Filter{Allow: allowed}); err != nil {
			return err
		}
		label := d.Label
		if d.StepLabel != "" {
			label = d.StepLabel
		}
		if _, err := sc.AddGuard(readOnlyGuard(label, allowed)); err != nil {
			return err
		}
	}
	return nil
}

// structuredGuard refuses every call of a structured child once it
// recorded its result, or a program's nested structured_output succeeded
// and waits for its program (upstream's monotonic guard).
func (c *Child) structuredGuard(ctx context.Context, call *pipeline.Call) (string, bool) {
	events, err := c.log.Events()
	if err != nil {
		return "the child's log cannot be read: " + err.Error(), true
	}
	if v, pending := delegation.StructuredCapture(events); v != nil || pending {
		return subagent.StructuredRefusal(call.Name()), true
	}
	return "", false
}

// readOnlyTools are the registered tools of [ReadOnlyTools].
func (c *Child) readOnlyTools() []string {
	var out []string
	for _, t := range c.rt.host.Definitions() {
		if slices.Contains(ReadOnlyTools, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// --8<-- [start:read-only-guard]
// readOnlyGuard denies every call of the step to a tool outside allowed. It
// sits in the step's own scope, so it sees every call the step makes (nested
// ones included) and, as a guard, its denial is final: no listener, answer
// or wrapper registered anywhere can turn it back into a write.
func readOnlyGuard(label string, allowed []string) pipeline.Guard {
	return func(ctx context.Context, call *pipeline.Call) (string, bool) {
		if slices.Contains(allowed, call.Name()) {
			return "", false
		}
		return delegation.ReadOnlyDenial(label, call.Name(), allowed), true
	}
}

// --8<-- [end:read-only-guard]

// Agent returns the child agent.
func (c *Child) Agent() *pipeline.Agent { return c.agent }

// Log returns the child's session log.
func (c *Child) Log() *session.Log { return c.log }

// Info returns what the child is.
func (c *Child) Info() ChildInfo { return c.info }

// PreStep appends a one-shot child's descriptor the first time a step goes
// ahead (inside its first turn, once every pre-step listener has let it
// enter: after the UserPromptSubmit hooks' events, never for a step they
// blocked), as upstream's scoped pre-step listener does; a continuable
// child's is in its seed. A child's step enters no message of its own.
func (c *Child) PreStep() ([]pipeline.ContextMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.described {
		return nil, nil
	}
	c.described = true
	_, err := c.log.Append(session.KindSubagentDescriptor, c.descriptor)
	return nil, err
}

// BeginTurn opens the child's next turn (turn/start {turn}) and enters its
// step (the descriptor inside the first one), for a caller that drives the
// child without an agent loop (the sims).
func (c *Child) BeginTurn() error {
	c.mu.Lock()
	c.turns++
	turn := c.turns
	c.mu.Unlock()
	if _, err := c.log.Append(session.KindTurnStart, session.TurnStart{Turn: turn}); err != nil {
		return err
	}
	_, err := c.PreStep()
	return err
}

// Tools returns the names of the tools the child sees, in registration order.
func (c *Child) Tools() []string {
	var out []string
	for _, t := range c.rt.host.ToolsFor(c.agent) {
		out = append(out, t.Name)
	}
	return out
}

// WireTools returns the tools the child's model is offered, sorted by name.
func (c *Child) WireTools() []pipeline.Tool { return c.rt.host.WireTools(c.agent) }

// PromptSections returns the sections the stack owns for the child (its
// tools', the report tool's among them).
func (c *Child) PromptSections() ([]toolreg.Section, error) { return c.rt.host.PromptSections(c.agent) }

// Execute runs one call of the child through the stack's pipeline.
func (c *Child) Execute(ctx context.Context, callID, name string, args json.RawMessage) pipeline.Result {
	return c.rt.host.Execute(ctx, c.agent, callID, name, args)
}

// RuntimeContext renders the child's runtime-context message from its log:
// sandbox:policy, approval:policy, then subagent:delegation.
func (c *Child) RuntimeContext(ctx context.Context) (RuntimeContext, error) {
	return c.rt.host.RuntimeContext(c.log, delegation.Section())
}

// PendingContext returns the runtime-context message the child's step
// would enter (sandbox:policy, approval:policy, subagent:delegation), or
// nil when its text is the last one logged.
func (c *Child) PendingContext(ctx context.Context) (*policy.SnapshotMessage, error) {
	return c.rt.host.PendingContext(c.log, delegation.Section())
}

// PendingCatalog returns the skill catalog message the child's step would
// enter (upstream's listener runs for every agent), or nil.
func (c *Child) PendingCatalog(ctx context.Context) (*skill.Message, error) {
	return c.rt.host.PendingCatalog(c.log)
}

// UserMessageEntered resets the child's repeated-call run (a step entered
// a user's message).
func (c *Child) UserMessageEntered() { c.rt.host.UserMessageEntered(c.agent) }

// End ends the child: its scope (every registration of its setup goes, and
// its further calls are refused), then its log.
func (c *Child) End() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return nil
	}
	c.ended = true
	c.agent.Scope().End()
	return c.log.Close()
}
