package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/askuser"
	"github.com/dshsim/dshsim/tools/subagent"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Message is a user-role message delivered to an agent's inbox: its content
// blocks as they are, its source (a value whose JSON is upstream's, key
// order included) and its id.
type Message struct {
	Content []json.RawMessage
	Source  any
	ID      string
}

// Loop is one live agent's loop: the application's agent loop (the replay
// driver), which the delegation runtime hands messages to and waits for.
type Loop interface {
	// Followup queues m as a later turn (the next-turn inbox); an idle agent
	// wakes and runs it.
	Followup(m Message) error
	// Steer queues m for the agent's next step (the next-step inbox); an
	// idle agent wakes.
	Steer(m Message) error
	// Running reports that a turn runs (the agent's status; an idle
	// agent may still have messages waiting to be claimed).
	Running() bool
	// Idle reports quiescence: no turn runs and nothing is queued.
	Idle() bool
	// WhenIdle returns once the agent is idle (or ctx ends).
	WhenIdle(ctx context.Context) error
	// Cancel aborts the current turn; keepInbox leaves queued messages
	// parked (an interrupt), else they are dropped.
	Cancel(keepInbox bool)
	// Close stops the loop once idle (the child's disposal); its error is
	// a disposal failure.
	Close() error
}

// Loops starts the loop of a new (or cold-resumed) child: the
// application's agent loop bound to the child's model.
type Loops interface {
	Start(c *Child) (Loop, error)
}

// Provider is a subagent provider other than the in-process spawn and fork
// (an out-of-process product, or a constructed one): it runs one-shot
// children only.
type Provider interface {
	// Name is the provider's name; Info its capabilities and wording.
	Name() string
	Info() subagent.ProviderInfo
	// Start starts one run.
	Start(ctx context.Context, req subagent.Request) (subagent.Run, error)
}

// SubagentEnd is the live subagent/end of a child (not logged): which
// child, and how its run or activation stopped.
type SubagentEnd struct {
	ChildID  string
	Provider string
	Stop     delegation.StopReason
}

// SubagentsConfig composes delegation (Config.Subagents).
type SubagentsConfig struct {
	// Instances are the delegation tools, in registration order.
	Instances []subagent.Instance
	// Control composes send_message, interrupt_agent and list_agents;
	// Report gives every continuable child the report tool.
	Control, Report bool
	// AskUser composes ask_user_question (a root's questions go to Ask;
	// nil refuses them).
	AskUser bool
	Ask     askuser.Answerer
	// Workflow composes the workflow tool (its children are one-shot spawn
	// children); WorkflowMaxConcurrentAgents caps its agents running at
	// once (0: upstream's min(16, max(1, cores-2))).
	Workflow                    bool
	WorkflowMaxConcurrentAgents int
	// Loops drives every child (required).
	Loops Loops
	// Route is the model the agents are driven by (a continuable child's
	// descriptor records it).
	Route delegation.Route
	// Providers are providers beyond spawn and fork.
	Providers []Provider
	// SessionsDir is where child logs are created (absolute).
	SessionsDir string
	// NewID names a new child session (nil: a random UUID).
	NewID func(parent *pipeline.Agent) string
	// OnEnd observes every live subagent/end (nil: nobody).
	OnEnd func(SubagentEnd)
}

// One is maxDepth 1, the default composition's cap.
func one() *int { n := 1; return &n }

// DefaultSubagents is upstream's default ACP composition of delegation:
// subagent (spawn, continuable, maxDepth 1), subagent_fork (fork, waits,
// maxDepth 1), send_message, interrupt_agent, list_agents, report in
// continuable children, and the workflow tool.
func DefaultSubagents() SubagentsConfig {
	return SubagentsConfig{
		Instances: []subagent.Instance{
			{Name: "subagent", Provider: ProviderSpawn, Background: subagent.Continuable, MaxDepth: one()},
			{Name: "subagent_fork", Provider: ProviderFork, Background: subagent.OneShot, NoBackground: true, MaxDepth: one()},
		},
		Control: true, Report: true, Workflow: true,
	}
}

// subagents is the delegation runtime: the children of this stack's
// session tree, their loops and activations ([subagent.Service]).
type subagents struct {
	s         *Stack
	cfg       SubagentsConfig
	providers map[string]Provider

	mu          sync.Mutex
	records     map[string]*record // every child session, by id
	order       []*record          // in creation order
	loops       map[*pipeline.Agent]Loop
	activations map[string]*activation // live continuable children
}

// record is one child session as the runtime knows it.
type record struct {
	header     session.Header
	path       string
	descriptor delegation.Descriptor
	filter     *pipeline.Filter
	continuous bool
}

// delegationTools composes delegation (Config.Subagents): the runtime of
// children, then the delegation tools over it (ask_user_question and the
// workflow tool are lines of their own).
func (s *Stack) delegationTools() ([]toolreg.Tool, error) {
	cfg := s.cfg.Subagents
	if cfg.Loops == nil || !filepath.IsAbs(cfg.SessionsDir) {
		return nil, errors.New("delegation needs an agent loop for children (Subagents.Loops) and an absolute Subagents.SessionsDir")
	}
	rt := &subagents{s: s, cfg: *cfg, providers: map[string]Provider{}, records: map[string]*record{},
		loops: map[*pipeline.Agent]Loop{}, activations: map[string]*activation{}}
	for _, p := range cfg.Providers {
		if p.Name() == ProviderSpawn || p.Name() == ProviderFork || rt.providers[p.Name()] != nil {
			return nil, fmt.Errorf("a subagent provider named %q is already registered", p.Name())
		}
		rt.providers[p.Name()] = p
	}
	s.subagents = rt
	return subagent.New(subagent.Config{Instances: cfg.Instances, Control: cfg.Control, Service: rt, Jobs: s.jobs})
}

// installReport gives a continuable child's own scope the report tool.
func (rt *subagents) installReport(sc pipeline.Scoped) error {
	regs, err := subagent.Report(subagent.Config{Service: rt})
	if err != nil {
		return err
	}
	return rt.s.registerIn(sc, regs[0])
}

// AttachLoop registers the session agent's loop: settlement notices and
// reports of its children are delivered through it.
func (s *Stack) AttachLoop(l Loop) {
	if s.subagents == nil {
		return
	}
	s.subagents.mu.Lock()
	s.subagents.loops[s.agent] = l
	s.subagents.mu.Unlock()
}

// Provider describes a provider ([subagent.Service]).
func (rt *subagents) Provider(name string) (subagent.ProviderInfo, bool) {
	switch name {
	case ProviderSpawn:
		return subagent.ProviderInfo{DepthLimit: true, Continuable: true}, true
	case ProviderFork:
		return subagent.ProviderInfo{InheritsContext: true, DepthLimit: true, Continuable: true}, true
	}
	if p := rt.providers[name]; p != nil {
		return p.Info(), true
	}
	return subagent.ProviderInfo{}, false
}

// newChild delegates a child of req.Caller and starts its loop.
func (rt *subagents) newChild(provider string, req subagent.Request, continuable bool) (*Child, Loop, error) {
	id := ""
	if rt.cfg.NewID != nil {
		id = rt.cfg.NewID(req.Caller)
	}
	if id == "" {
		id = newUUID()
	}
	d := Delegation{SessionID: id, LogPath: filepath.Join(rt.cfg.SessionsDir, id+".jsonl"), Parent: req.Caller, CallID: req.CallID,
		Provider: provider, Continuable: continuable, Route: rt.cfg.Route, Report: rt.cfg.Report, MaxDepth: req.MaxDepth,
		Label: req.Label, ToolFilter: req.ToolFilter, Persona: req.Persona, ReadOnly: req.ReadOnly, StepLabel: req.StepLabel, Sandbox: req.Sandbox}
	c, err := rt.s.Delegate(d)
	if err != nil {
		return nil, nil, err
	}
	rt.remember(c, d)
	loop, err := rt.cfg.Loops.Start(c)
	if err != nil {
		return nil, nil, errors.Join(err, c.End())
	}
	rt.mu.Lock()
	rt.loops[c.agent] = loop
	rt.mu.Unlock()
	return c, loop, nil
}

// remember records a new child session.
func (rt *subagents) remember(c *Child, d Delegation) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	r := &record{header: c.log.Header(), path: c.log.Path(), descriptor: c.descriptor, filter: d.ToolFilter, continuous: d.Continuable}
	rt.records[r.header.ID] = r
	rt.order = append(rt.order, r)
}

// forget drops a disposed child's loop.
func (rt *subagents) forget(a *pipeline.Agent) {
	rt.mu.Lock()
	delete(rt.loops, a)
	rt.mu.Unlock()
}

// loopOf is the live loop of the agent whose session is id (nil: none).
func (rt *subagents) loopOf(id string) (Loop, *pipeline.Agent) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for a, l := range rt.loops {
		if a.Session != nil && a.Session.ID() == id {
			return l, a
		}
	}
	return nil, nil
}

// end reports a live subagent/end.
func (rt *subagents) end(id, provider string, stop delegation.StopReason) {
	if rt.cfg.OnEnd != nil {
		rt.cfg.OnEnd(SubagentEnd{ChildID: id, Provider: provider, Stop: stop})
	}
}

// userMessage is a message with text content.
func userMessage(content []json.RawMessage, source any) Message {
	return Message{Content: content, Source: source, ID: newUUID()}
}

// textContent is one text block.
func textContent(s string) []json.RawMessage {
	raw, _ := json.Marshal(pipeline.TextBlock(s))
	return []json.RawMessage{raw}
}

// newUUID is a random version-4 UUID ([session.NewID]).
func newUUID() string { return session.NewID() }
