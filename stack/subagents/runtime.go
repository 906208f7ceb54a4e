package subagents

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
	// Inject queues m for the agent's next step without waking it
	// (upstream's agent.inject: a lifecycle hook's context).
	Inject(m Message) error
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

// End is the live subagent/end of a child (not logged): which child, and
// how its run or activation stopped.
type End struct {
	ChildID  string
	Provider string
	Stop     delegation.StopReason
}

// Config composes delegation (the stack's Config.Subagents): the
// delegation tools the stack registers over the runtime and what the
// runtime drives them with.
type Config struct {
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
	OnEnd func(End)
}

// one is maxDepth 1, the default composition's cap.
func one() *int { n := 1; return &n }

// Default is upstream's default ACP composition of delegation: subagent
// (spawn, continuable, maxDepth 1), subagent_fork (fork, waits, maxDepth
// 1), send_message, interrupt_agent, list_agents, report in continuable
// children, and the workflow tool.
func Default() Config {
	return Config{
		Instances: []subagent.Instance{
			{Name: "subagent", Provider: ProviderSpawn, Background: subagent.Continuable, MaxDepth: one()},
			{Name: "subagent_fork", Provider: ProviderFork, Background: subagent.OneShot, NoBackground: true, MaxDepth: one()},
		},
		Control: true, Report: true, Workflow: true,
	}
}

// Runtime is the delegation runtime of one stack: it delegates children
// ([Runtime.Delegate]) and, when configured, runs them: the children of the
// session tree, their loops and activations ([subagent.Service]).
type Runtime struct {
	host      Host
	preset    string  // the agent preset a child's header names ("": upstream's default)
	cfg       *Config // nil: delegation is not composed (Delegate alone)
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
	diagnostic string // set for an adopted child whose identity is unreadable
}

// New returns the runtime of host's delegations, whose children's headers
// name preset; cfg (nil: none) composes delegation: it needs an agent loop
// for children and an absolute sessions directory, and its providers'
// names must be unique (spawn and fork are taken).
func New(host Host, preset string, cfg *Config) (*Runtime, error) {
	rt := &Runtime{host: host, preset: preset, providers: map[string]Provider{}, records: map[string]*record{},
		loops: map[*pipeline.Agent]Loop{}, activations: map[string]*activation{}}
	if cfg == nil {
		return rt, nil
	}
	if cfg.Loops == nil || !filepath.IsAbs(cfg.SessionsDir) {
		return nil, errors.New("delegation needs an agent loop for children (Subagents.Loops) and an absolute Subagents.SessionsDir")
	}
	c := *cfg
	rt.cfg = &c
	for _, p := range cfg.Providers {
		if p.Name() == ProviderSpawn || p.Name() == ProviderFork || rt.providers[p.Name()] != nil {
			return nil, fmt.Errorf("a subagent provider named %q is already registered", p.Name())
		}
		rt.providers[p.Name()] = p
	}
	return rt, nil
}

// installReport gives a continuable child's own scope the report tool.
func (rt *Runtime) installReport(sc pipeline.Scoped) error {
	regs, err := subagent.Report(subagent.Config{Service: rt})
	if err != nil {
		return err
	}
	return rt.host.RegisterIn(sc, regs[0])
}

// AttachLoop registers the loop of agent (the session's): settlement
// notices and reports of its children are delivered through it. Without
// delegation composed it does nothing.
func (rt *Runtime) AttachLoop(agent *pipeline.Agent, l Loop) {
	if rt.cfg == nil {
		return
	}
	rt.mu.Lock()
	rt.loops[agent] = l
	rt.mu.Unlock()
}

// Provider describes a provider ([subagent.Service]).
func (rt *Runtime) Provider(name string) (subagent.ProviderInfo, bool) {
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
func (rt *Runtime) newChild(provider string, req subagent.Request, continuable bool) (*Child, Loop, error) {
	id := ""
	if rt.cfg.NewID != nil {
		id = rt.cfg.NewID(req.Caller)
	}
	if id == "" {
		id = newUUID()
	}
	d := Delegation{SessionID: id, LogPath: filepath.Join(rt.cfg.SessionsDir, id+".jsonl"), Parent: req.Caller, CallID: req.CallID,
		Provider: provider, Continuation: Continuation{
			Continuable: continuable,
			Route:       rt.cfg.Route,
			Report:      rt.cfg.Report,
			Persona:     req.Persona,
		}, Restriction: Restriction{
			MaxDepth:   req.MaxDepth,
			ToolFilter: req.ToolFilter,
			ReadOnly:   req.ReadOnly,
			StepLabel:  req.StepLabel,
			Sandbox:    req.Sandbox,
		},
		Label:        req.Label,
		OutputSchema: req.OutputSchema,
	}
	c, err := rt.Delegate(d)
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
	rt.host.SessionStarted(c.agent, SourceStartup, injector(loop))
	return c, loop, nil
}

// The sources of a published agent's session start.
const (
	SourceStartup = "startup"
	SourceResume  = "resume"
)

// pluginSource is a plugin's context message's source.
type pluginSource struct {
	Kind   string `json:"kind"`
	Plugin string `json:"plugin"`
}

// injector enters a lifecycle hook's context at loop's next step. A loop
// that no longer takes it (its agent is gone) drops it, as upstream's
// inject into a disposed agent does.
func injector(loop Loop) func(pipeline.ContextMessage) {
	return func(cm pipeline.ContextMessage) {
		content := make([]json.RawMessage, len(cm.Texts))
		for i, t := range cm.Texts {
			content[i] = textContent(t)[0]
		}
		_ = loop.Inject(userMessage(content, pluginSource{Kind: "plugin", Plugin: cm.Plugin}))
	}
}

// remember records a new child session.
func (rt *Runtime) remember(c *Child, d Delegation) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	r := &record{header: c.log.Header(), path: c.log.Path(), descriptor: c.descriptor, filter: d.ToolFilter, continuous: d.Continuable}
	rt.records[r.header.ID] = r
	rt.order = append(rt.order, r)
}

// forget drops a disposed child's loop.
func (rt *Runtime) forget(a *pipeline.Agent) {
	rt.mu.Lock()
	delete(rt.loops, a)
	rt.mu.Unlock()
}

// loopOf is the live loop of the agent whose session is id (nil: none).
func (rt *Runtime) loopOf(id string) (Loop, *pipeline.Agent) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for a, l := range rt.loops {
		if a.Session != nil && a.Session.ID() == id {
			return l, a
		}
	}
	return nil, nil
}

// end reports a live subagent/end of c: the host's hooks, then OnEnd.
func (rt *Runtime) end(c *Child, stop delegation.StopReason) {
	rt.host.SubagentEnded(c.agent)
	if rt.cfg.OnEnd != nil {
		rt.cfg.OnEnd(End{ChildID: c.info.SessionID, Provider: c.info.Provider, Stop: stop})
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
