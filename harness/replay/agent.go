package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/jobs"
)

// wire is where an agent's frames go: the session's bridge (answers); a
// child's are nobody's (upstream's children have no client).
type wire interface {
	send(acpwire.Frame)
}

// noWire discards a child's frames.
type noWire struct{}

func (noWire) send(acpwire.Frame) {}

// agentHooks are the emulated fixtures' seams in one agent's loop (see
// fixtures.go): nil hooks do nothing.
type agentHooks struct {
	// preStep runs once a step's inbox is claimed, before the step is
	// entered; an error ends the turn with it (a checkpoint failure).
	preStep func(ctx context.Context, a *agent, turn, step int) error
	// afterTurn runs when a turn ended (a maintenance task may begin).
	afterTurn func(a *agent, turn int)
	// followup runs before a message is queued as a later turn; an error
	// refuses it.
	followup func(a *agent) error
	// close is the agent's disposal; its error is a disposal failure.
	close func(a *agent) error
}

// agent is one session's agent loop (the session's agent, or a delegated
// child): upstream's turn loop over the session's inbox, run in a goroutine
// of its own. A message queued as a later turn (Followup: the next-turn
// inbox) or for the next step (Steer, job notices, hook contexts: the
// next-step inbox) wakes an idle agent; each turn claims the next-step
// inbox first, then one next-turn message, and runs steps (one model call
// and its tool calls each) until the model stops and nothing more was
// queued for a next step. It is the [stack.Loop] of its agent.
type agent struct {
	label   string // how flags name the session ("" for session.jsonl)
	surface stack.Surface
	log     *session.Log
	model   Model
	system  string
	wire    wire
	gate    *jobs.Gate
	inbox   *inbox
	hooks   agentHooks
	base    context.Context

	mu          sync.Mutex
	cond        *sync.Cond
	nextTurn    []userMessage
	running     bool
	maintenance int // tasks that keep an idle agent from being quiescent
	held        int // holds that keep an open turn from its first step (holdUntilYield)
	pre         *preopened
	yields      int // the host's yields during this agent's work (see yield)
	closed      bool
	stopped     chan struct{}
	turnCancel  context.CancelCauseFunc
	turnNo      int
	ended       map[int]map[string]any // turn → its turn/end reason
	claimedBy   map[string]int         // message id → the turn that claimed it
	titled      bool
	headed      bool
	exhausted   bool
	firstTask   string // the first user prompt queued (a child's task)
	// offered, sections and sectionsErr are what the model was offered at
	// the agent's first request (a child's scope ends with it).
	offered     []pipeline.Tool
	sections    []stack.PromptSection
	sectionsErr error
	flags       []string
	err         error // a failure that stopped the loop
}

// newAgent starts the loop of surface's agent (its turn numbering, title
// and request header continue what the log already holds: a fork's copied
// turns, a resumed child's earlier ones).
func newAgent(base context.Context, label string, surface stack.Surface, model Model, system string, w wire, gate *jobs.Gate, hooks agentHooks) (*agent, error) {
	log := surface.Log()
	a := &agent{label: label, surface: surface, log: log, model: model, system: system, wire: w, gate: gate, hooks: hooks, base: base,
		stopped: make(chan struct{}), ended: map[int]map[string]any{}, claimedBy: map[string]int{}}
	a.cond = sync.NewCond(&a.mu)
	a.inbox = &inbox{log: logAppender{log}, wake: a.wake}
	events, err := log.Events()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", log.Path(), err)
	}
	for _, e := range events {
		switch e.Type {
		case "turn/start":
			a.turnNo++
		case "session/title":
			a.titled = true
		}
	}
	go a.loop()
	return a, nil
}

// wake is called when the next-step inbox got a message.
func (a *agent) wake() {
	a.mu.Lock()
	a.cond.Broadcast()
	a.mu.Unlock()
}

// hasWork reports whether a message waits (a.mu held).
func (a *agent) hasWork() bool { return len(a.nextTurn) > 0 || a.inbox.wants() }

// preopened is a turn a follow-up opened synchronously (see queue): the
// loop runs its steps.
type preopened struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	turn   *openedTurn
	err    error
}

// loop runs turns while messages wait; it ends when closed and idle, or
// after a failure. A turn a follow-up opened is run even when the agent
// was closed meanwhile (its turn/start is in the log: it ends, aborted).
func (a *agent) loop() {
	defer close(a.stopped)
	for {
		a.mu.Lock()
		for a.pre == nil && !a.closed && (a.running || !a.hasWork() || a.maintenance > 0) {
			a.cond.Wait()
		}
		pre := a.pre
		a.pre = nil
		if pre == nil && a.closed {
			a.mu.Unlock()
			return
		}
		a.running = true
		a.mu.Unlock()
		turn, err := a.runTurn(pre)
		a.mu.Lock()
		a.running = false
		a.yields++ // an idle agent: the host yields
		if err != nil && a.err == nil {
			a.err = err
			a.closed = true
		}
		a.cond.Broadcast()
		a.mu.Unlock()
		if err == nil && a.hooks.afterTurn != nil {
			a.hooks.afterTurn(a, turn)
		}
	}
}

// Followup queues m as a later turn: spliced into the next-turn inbox now
// (agent/inbox/spliced), claimed by the turn that runs it.
func (a *agent) Followup(m stack.Message) error {
	if a.hooks.followup != nil {
		if err := a.hooks.followup(a); err != nil {
			return err
		}
	}
	return a.queue(messageOf(m))
}

// queue splices um into the next-turn inbox. An idle agent (no turn, no
// maintenance task) opens the turn that claims it at once, before queue
// returns, as upstream's loop does: its followup starts the driver, whose
// turn appends turn/start and claims the inbox before its first await. The
// turn's steps run in the loop's goroutine.
func (a *agent) queue(um userMessage) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return errors.New("the agent is disposed")
	}
	if _, err := a.log.Append("agent/inbox/spliced", splice{Target: "next-turn", Start: len(a.nextTurn), Inserted: []userMessage{um}}); err != nil {
		a.mu.Unlock()
		return fmt.Errorf("append agent/inbox/spliced to our log: %w", err)
	}
	a.nextTurn = append(a.nextTurn, um)
	if a.firstTask == "" && sourceKind(um.Source) == "user" {
		a.firstTask = messageText(&um)
	}
	open := !a.running && a.pre == nil && a.maintenance == 0
	if open {
		a.running = true // the driver is reserved: the loop waits for the opened turn
	}
	a.cond.Broadcast()
	a.mu.Unlock()
	if !open {
		return nil
	}
	ctx, cancel := context.WithCancelCause(a.base)
	t, err := a.openTurn(cancel)
	a.mu.Lock()
	a.pre = &preopened{ctx: ctx, cancel: cancel, turn: t, err: err}
	a.cond.Broadcast()
	a.mu.Unlock()
	return nil
}

// task is the first user prompt the agent was given.
func (a *agent) task() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.firstTask
}

// logAppender appends the inbox's events to the session log.
type logAppender struct{ log *session.Log }

func (l logAppender) append(typ string, data any) error {
	if _, err := l.log.Append(typ, data); err != nil {
		return fmt.Errorf("append %s to our log: %w", typ, err)
	}
	return nil
}

// Steer queues m for the agent's next step (the next-step inbox); an idle
// agent wakes.
func (a *agent) Steer(m stack.Message) error {
	return a.inbox.steer(messageOf(m))
}

// messageOf is the log's form of a delivered message.
func messageOf(m stack.Message) userMessage {
	content := make([]any, len(m.Content))
	for i, c := range m.Content {
		content[i] = c
	}
	return userMessage{Content: content, Source: m.Source, Role: "user", ID: m.ID}
}

// Running reports whether a turn runs.
func (a *agent) Running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

// Idle reports quiescence: no turn runs, nothing waits, no maintenance
// task runs.
func (a *agent) Idle() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.idleLocked()
}

func (a *agent) idleLocked() bool {
	return a.closed && a.pre == nil || (!a.running && !a.hasWork() && a.maintenance == 0 && a.held == 0)
}

// WhenIdle returns once the agent is quiescent, or ctx ended.
func (a *agent) WhenIdle(ctx context.Context) error {
	return a.waitUntil(ctx, a.idleLocked)
}

// waitUntil waits until cond holds (a.mu held while it is checked).
func (a *agent) waitUntil(ctx context.Context, cond func() bool) error {
	stop := context.AfterFunc(ctx, a.wake)
	defer stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for !cond() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.cond.Wait()
	}
	return nil
}

// errParentCancel is the cause of a turn its parent cancelled (a disposal,
// an interrupt): upstream aborts it with the reason {kind: "parent"}.
var errParentCancel = errors.New("the parent agent cancelled the turn")

// Cancel aborts the running turn; without keepInbox the queued later turns
// are dropped too (a disposal), with it they stay (an interrupt).
func (a *agent) Cancel(keepInbox bool) { a.cancelTurn(errParentCancel, keepInbox) }

func (a *agent) cancelTurn(cause error, keepInbox bool) {
	a.mu.Lock()
	cancel := a.turnCancel
	running := a.running
	if !keepInbox {
		a.nextTurn = nil
	}
	a.cond.Broadcast()
	a.mu.Unlock()
	if running && cancel != nil {
		cancel(cause)
	}
}

// Close stops the loop once its turn ended; the fixture's disposal failure
// is its error.
func (a *agent) Close() error {
	a.mu.Lock()
	a.closed = true
	a.cond.Broadcast()
	a.mu.Unlock()
	<-a.stopped
	if a.hooks.close != nil {
		return a.hooks.close(a)
	}
	return nil
}

// yield records that the host yielded while this agent worked: it awaits
// I/O (a tool call that yields, a fixture's wait) or went idle. A
// background child started by it runs from its next yield on.
func (a *agent) yield() {
	a.mu.Lock()
	a.yields++
	a.cond.Broadcast()
	a.mu.Unlock()
}

// holdUntilYield keeps child's first turn from entering its first step
// until a yields after now: upstream's host runs a background child's step
// only once the agent that started it awaits something or goes idle (its
// own non-yielding work, a model call that answers at once, comes first);
// the child's turn/start and claim are written at once, when its prompt
// is queued (see queue).
func (a *agent) holdUntilYield(child *agent) {
	a.mu.Lock()
	mark := a.yields
	a.mu.Unlock()
	child.mu.Lock()
	child.held++
	child.mu.Unlock()
	go func() {
		a.waitUntil(a.base, func() bool { return a.yields > mark || a.closed })
		child.mu.Lock()
		child.held--
		child.cond.Broadcast()
		child.mu.Unlock()
	}()
}

// beginMaintenance and endMaintenance bracket a task that keeps an idle
// agent busy (it starts no turn meanwhile, and is not quiescent).
func (a *agent) beginMaintenance() {
	a.mu.Lock()
	a.maintenance++
	a.mu.Unlock()
}

func (a *agent) endMaintenance() {
	a.mu.Lock()
	a.maintenance--
	a.cond.Broadcast()
	a.mu.Unlock()
}

// flag records a problem of this agent's replay.
func (a *agent) flag(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.label != "" {
		s = a.label + ": " + s
	}
	a.flags = append(a.flags, s)
}

// problems returns the agent's flags, and the failure that stopped it.
func (a *agent) problems() ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.flags...), a.err
}

// turnEnded reports the reason turn ended with (false while it runs).
func (a *agent) turnEnded(turn int) (map[string]any, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.ended[turn]
	return r, ok
}

// append and appendWith append to the agent's log.
func (a *agent) append(typ string, data any) (session.Event, error) {
	return a.appendWith(typ, data, session.AppendOptions{})
}

func (a *agent) appendWith(typ string, data any, o session.AppendOptions) (session.Event, error) {
	e, err := a.log.AppendWith(typ, data, o)
	if err != nil {
		return e, fmt.Errorf("append %s to our log: %w", typ, err)
	}
	return e, nil
}

// appendMessages appends messages as user/message events, each surfaced
// with op append.
func (a *agent) appendMessages(ms []userMessage) error {
	for _, m := range ms {
		if _, err := a.appendWith("user/message", m, session.AppendOptions{SurfaceOp: "append"}); err != nil {
			return err
		}
	}
	return nil
}

// execute runs one tool call of the agent.
func (a *agent) execute(ctx context.Context, id, name string, args json.RawMessage) pipeline.Result {
	return a.surface.Execute(ctx, id, name, args)
}
