package stack

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
)

// ReadOnlyTools are the tools a read-only workflow step keeps (those of them
// that are registered): reading files and the output of jobs.
var ReadOnlyTools = []string{"read", "job_output", "job_list"}

// Delegation describes one delegated child agent (upstream's in-process
// spawn, one-shot).
type Delegation struct {
	// ID is the child agent's id (a label in messages).
	ID string
	// SessionID is the child session's id.
	SessionID string
	// LogPath is where the child's session log is created (absolute; the
	// file must not exist).
	LogPath string
	// MaxDepth caps the delegation depth (nil: no cap).
	MaxDepth *int
	// Label is the descriptor's label (a workflow step's name).
	Label string
	// ToolFilter restricts the tools the child sees (upstream's toolFilter:
	// a child-scoped tools.restrict).
	ToolFilter *pipeline.Filter
	// ReadOnly makes the child a workflow step restricted to read-only tools
	// (our extension: docs/stack.md, Following the page's description): a
	// child-scoped restriction to
	// [ReadOnlyTools] and a child-scoped guard that denies every other tool,
	// so nothing registered later can re-allow a write.
	ReadOnly bool
	// Now stamps the child header (nil: time.Now).
	Now func() time.Time
}

// Child is a delegated child agent: its own session log and scope, the
// stack's tools and approval service. It is returned only once every
// registration of its setup is in place.
type Child struct {
	s          *Stack
	agent      *pipeline.Agent
	log        *session.Log
	descriptor delegation.Descriptor

	mu    sync.Mutex
	turns int
	ended bool
}

// Delegate starts a child of the session's agent, in upstream's order:
// check the depth; capture, before anything else, the parent's explicit
// sandbox override and the approval pin (never, since the stack always
// composes an approval service); create the child log (origin "subagent",
// parentSession, agentPreset, delegationDepth); append sandbox/mode and
// approval/policy with source "delegation"; bind the child's scope under the
// preset's standing scope (a sibling of the parent's, so the parent's own
// registrations do not reach it); register the tool filter and, for a
// read-only step, the restriction and the guard. Any failure rolls back:
// the scope ends and the log file is removed; no child is returned.
func (s *Stack) Delegate(d Delegation) (*Child, error) {
	parent := s.agent
	if d.ID == "" || d.SessionID == "" {
		return nil, errors.New("stack: a delegation needs a child id and a session id")
	}
	if !filepath.IsAbs(d.LogPath) {
		return nil, fmt.Errorf("stack: the child log path %q must be absolute", d.LogPath)
	}
	depth, err := delegation.ChildDepth(parent.Session.Header().DelegationDepth, d.MaxDepth)
	if err != nil {
		return nil, err
	}
	events, err := parent.Session.Events()
	if err != nil {
		return nil, fmt.Errorf("stack: read the parent's log: %w", err)
	}
	capture, err := delegation.CaptureFrom(events, s.approver != nil)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	h := delegation.ChildHeader(d.SessionID, now().UnixMilli(), parent.Session.Header(), s.preset(), depth)
	log, err := session.Create(d.LogPath, h)
	if err != nil {
		return nil, err
	}
	c := &Child{s: s, log: log, agent: &pipeline.Agent{ID: d.ID, Session: log}}
	if err := c.setup(d, capture); err != nil {
		c.agent.Scope().End()
		return nil, errors.Join(err, log.Close(), os.Remove(d.LogPath))
	}
	return c, nil
}

// setup runs while the child is unpublished.
func (c *Child) setup(d Delegation, capture delegation.Capture) error {
	if _, err := delegation.Seed(c.log, capture); err != nil {
		return err
	}
	if _, err := c.agent.Scope().Bind(c.s.standing); err != nil {
		return err
	}
	sc := c.s.reg.In(c.agent.Scope())
	filter := d.ToolFilter
	if filter != nil {
		if _, err := sc.Restrict(*filter); err != nil {
			return err
		}
	}
	if d.ReadOnly {
		allowed := c.readOnlyTools()
		ro := &pipeline.Filter{Allow: allowed}
		if _, err := sc.Restrict(*ro); err != nil {
			return err
		}
		if _, err := sc.AddGuard(readOnlyGuard(d.Label, allowed)); err != nil {
			return err
		}
		if filter == nil {
			filter = ro
		}
	}
	c.descriptor = delegation.NewDescriptor(d.Label, filter)
	return nil
}

// readOnlyTools are the registered tools of [ReadOnlyTools].
func (c *Child) readOnlyTools() []string {
	var out []string
	for _, t := range c.s.reg.Tools() {
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

// BeginTurn opens the child's next turn (turn/start {turn}); inside the
// first one it records the descriptor (subagent/descriptor), as upstream's
// one-shot child does from its first step.
func (c *Child) BeginTurn() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turns++
	if _, err := c.log.Append("turn/start", map[string]int{"turn": c.turns}); err != nil {
		return err
	}
	if c.turns == 1 {
		if _, err := c.log.Append(delegation.EventDescriptor, c.descriptor); err != nil {
			return err
		}
	}
	return nil
}

// Tools returns the names of the tools the child sees, in registration order.
func (c *Child) Tools() []string {
	var out []string
	for _, t := range c.s.reg.ToolsFor(c.agent) {
		out = append(out, t.Name)
	}
	return out
}

// Execute runs one call of the child through the stack's pipeline.
func (c *Child) Execute(ctx context.Context, callID, name string, args json.RawMessage) pipeline.Result {
	return c.s.reg.Execute(pipeline.NewCall(callID, name, args, c.agent, ctx))
}

// RuntimeContext renders the child's runtime-context message from its log:
// sandbox:policy, approval:policy, then subagent:delegation.
func (c *Child) RuntimeContext(ctx context.Context) (RuntimeContext, error) {
	return c.s.contextOf(c.log, delegation.Section())
}

// SyncContext appends the child's runtime-context message when it changed.
func (c *Child) SyncContext(ctx context.Context) (*session.Event, error) {
	return c.s.resolver.SyncContext(c.log, delegation.Section())
}

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

// contextOf renders the runtime context of log with extra sections.
func (s *Stack) contextOf(log *session.Log, extra ...policy.Section) (RuntimeContext, error) {
	events, err := log.Events()
	if err != nil {
		return RuntimeContext{}, err
	}
	secs, text, err := s.resolver.Context(log.Header(), events, extra...)
	if err != nil {
		return RuntimeContext{}, err
	}
	rc := RuntimeContext{Text: text}
	for _, s := range secs {
		if s.Text != "" {
			rc.Sections = append(rc.Sections, Section{Name: s.Name, Text: s.Text})
		}
	}
	return rc, nil
}
