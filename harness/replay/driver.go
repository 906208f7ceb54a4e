package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/jobs"
)

// errUserCancel is the cause of a prompt the user cancelled (promptAndCancel).
var errUserCancel error = userCancel{}

// userCancel is the user's cancellation. Upstream aborts the turn with the
// reason {kind: "user"}, a plain object, so a run_code program cancelled by
// the user fails with String(reason): "code run failed (abort): [object
// Object]" (the oracle recording code-mode-cancel).
type userCancel struct{}

func (userCancel) Error() string { return "the user cancelled the prompt" }

// JSString is String({kind: "user"}) (noderuntime.JSReason).
func (userCancel) JSString() string { return "[object Object]" }

// errParentCancel is the cause of a turn its parent cancelled (a disposal,
// an interrupt): upstream aborts it with the reason {kind: "parent"}.
var errParentCancel = errors.New("the parent agent cancelled the turn")

// waitLimit bounds the harness waits (upstream: 10 s, polling every 10 ms).
const (
	waitLimit = 10 * time.Second
	waitPoll  = 10 * time.Millisecond
)

// ModelLatency is the least time the constructed model takes to answer a
// call while a background job runs; it also waits until the running
// background jobs settled (until they used settleCap of CPU time, at most
// settleCeiling). With no job running it answers at once.
const ModelLatency = 50 * time.Millisecond

// maxParallelToolCalls bounds a pool of concurrency-safe calls (upstream 10).
const maxParallelToolCalls = 10

// driver is the replay's agent loop for one agent: the session's agent, or
// a delegated child, each with a driver of its own over the same stack.
// It is upstream's agent loop (turn.go: turns, steps, the inbox, the
// pre-step and turn-stopping listeners; step.go: the model's calls and the
// tool calls), run in a goroutine of its own (loop.go): a message queued
// for a later turn or steered to the next step wakes an idle agent, and
// the delegation runtime drives a child through it ([stack.Loop]). It
// writes the events upstream's agent writes, in its order (so seq numbers
// line up and session_event_read sees what upstream's model saw), serves
// the scripted replies, and runs the tool calls through the stack the way
// upstream's scheduler does. The session's agent speaks to the client
// through upstream's ACP bridge (wire.go); a child has no client. The
// steps of input.json are the client's (client.go).
type driver struct {
	rec     *recording.Recording
	label   string // how flags name the session ("" for session.jsonl)
	model   Model
	system  string // the request header's system prompt
	log     *session.Log
	surface stack.Surface // the agent's tools, context and calls
	stack   *stack.Stack  // the composition: hook bridges, definitions
	ws      string
	wire    agentWire  // the frames the bridge sends (nothing, for a child)
	gate    *jobs.Gate // the host's yields
	inbox   *inbox
	hooks   agentHooks // the emulated fixtures' seams
	base    context.Context
	// preStep are the pre-step listeners, outermost first (prestep.go).
	preStep []preStepListener
	// instr are the workspace instructions (nil when off).
	instr  *instructionsPlugin
	titles *titles
	headed bool // the request header and context were logged
	// compacted: the compaction fixture replaced the baseline already.
	compacted bool
	// exhausted: the script ran out (flagged once).
	exhausted bool
	// offered, sections and sectionsErr are what the model was offered at
	// the agent's first request (a child's sidecars are compared with them).
	offered     []pipeline.Tool
	sections    []stack.PromptSection
	sectionsErr error

	mu          sync.Mutex
	cond        *sync.Cond
	turnNo      int
	running     bool        // a turn runs (or is reserved by a follow-up)
	woken       bool        // a message was queued or steered since the last turn opened
	maintenance int         // tasks that keep an idle agent from being quiescent
	held        int         // holds that keep an open turn from its first step (holdUntilYield)
	pre         *openedTurn // a turn a follow-up opened: the loop runs its steps
	yields      int         // the host's yields during this agent's work (see yield)
	closed      bool
	stopped     chan struct{}
	turnCancel  context.CancelCauseFunc
	ended       map[int]map[string]any // turn → its turn/end reason
	firstTask   string                 // the first user prompt queued (a child's task)
	titleDone   bool                   // the session has its title (none pending) at the last turn's end
	flags       []string
	err         error // a failure of the replay that stopped the loop
}

// driverConfig is what a driver is made of.
type driverConfig struct {
	rec     *recording.Recording
	label   string
	model   Model
	system  string
	surface stack.Surface
	stack   *stack.Stack
	ws      string
	wire    agentWire // nil: a child's (no client)
	gate    *jobs.Gate
	hooks   agentHooks
	// titleReplies are the title model's replies (sessionTitleLlm; the
	// session's agent only).
	titleReplies []recording.Reply
}

// newDriver composes the agent loop of one agent: its inbox, titles,
// workspace instructions (the recording's settings) and pre-step
// listeners, its turn numbering, title and request header continuing what
// its log already holds (a fork's copied turns, a resumed child's earlier
// ones); its loop runs until Close.
func newDriver(base context.Context, c driverConfig) (*driver, error) {
	log := c.surface.Log()
	d := &driver{rec: c.rec, label: c.label, model: c.model, system: c.system, log: log, surface: c.surface, stack: c.stack, ws: c.ws,
		wire: c.wire, gate: c.gate, hooks: c.hooks, base: base, stopped: make(chan struct{}), ended: map[int]map[string]any{}}
	if d.wire == nil {
		d.wire = noWire{}
	}
	d.cond = sync.NewCond(&d.mu)
	d.inbox = newInbox(logAppender{log})
	var llmTitle *recording.TitleLLM
	if c.wire != nil {
		llmTitle = c.rec.Settings.SessionTitleLLM // the session's title model
	}
	d.titles = &titles{llm: llmTitle, replies: c.titleReplies}
	events, err := log.Events()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", log.Path(), err)
	}
	for _, e := range events {
		switch e.Type {
		case "turn/start":
			d.turnNo++
		case "session/title":
			d.titles.titled = true
		}
	}
	d.instr = newInstructions(d, c.rec.Settings.WorkspaceContext)
	d.preStep = d.preStepListeners()
	go d.loop()
	return d, nil
}

// retryPolicy is a recording's retryPolicy setting with upstream's defaults
// filled in (nil: none).
func retryPolicy(p *recording.RetryPolicy) *llm.RetryPolicy {
	if p == nil {
		return nil
	}
	r := llm.DefaultRetryPolicy()
	r.Mode = p.Mode
	if p.MaxRetries != nil {
		r.MaxRetries = *p.MaxRetries
	}
	if p.RetryableCodes != nil {
		r.RetryableCodes = p.RetryableCodes
	}
	if b := p.Backoff; b != nil {
		if b.InitialDelayMs != nil {
			r.InitialDelayMs = *b.InitialDelayMs
		}
		if b.MaxDelayMs != nil {
			r.MaxDelayMs = *b.MaxDelayMs
		}
		if b.JitterRatio != nil {
			r.JitterRatio = *b.JitterRatio
		}
	}
	return &r
}

func (d *driver) append(typ string, data any) (session.Event, error) {
	return d.appendWith(typ, data, session.AppendOptions{})
}

// logAppender appends the inbox's events to the session log.
type logAppender struct{ log *session.Log }

func (a logAppender) append(typ string, data any) error {
	if _, err := a.log.Append(typ, data); err != nil {
		return fmt.Errorf("append %s to our log: %w", typ, err)
	}
	return nil
}

func (d *driver) appendWith(typ string, data any, o session.AppendOptions) (session.Event, error) {
	e, err := d.log.AppendWith(typ, data, o)
	if err != nil {
		return e, fmt.Errorf("append %s to our log: %w", typ, err)
	}
	return e, nil
}

// flag records a problem of this agent's replay (a child's names it).
func (d *driver) flag(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.label != "" {
		s = d.label + ": " + s
	}
	d.flags = append(d.flags, s)
}

// problems returns the agent's flags, and the failure that stopped it.
func (d *driver) problems() (flags []string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.flags...), d.err
}

// titleNotes are the notes of the session's titles (a model-made title
// that could not be made).
func (d *driver) titleNotes() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.titles.notes...)
}

// abortReason is the turn/end reason of a turn whose context ended.
func abortReason(ctx context.Context) map[string]any {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errUserCancel):
		return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "user"}}
	case errors.Is(cause, errParentCancel):
		return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "parent"}}
	default:
		return map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "replay-stopped", "error": cause.Error()}}
	}
}

func newUUID() string { return session.NewID() }
