package replay

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/stack"
)

// agentHooks are the emulated fixtures' seams in one agent's loop (see
// fixtures.go): nil hooks do nothing.
type agentHooks struct {
	// preStep runs once a step's inbox is claimed, before the pre-step
	// listeners; an error ends the turn with it (a checkpoint failure).
	preStep func(ctx context.Context, d *driver, turn, step int) error
	// turnEnded runs right after a turn's turn/end, while the turn still
	// counts as running (a maintenance task begun here keeps the agent
	// from being quiescent at once).
	turnEnded func(d *driver, turn int)
	// followup runs before a message is queued as a later turn; an error
	// refuses it.
	followup func(d *driver) error
	// close is the agent's disposal; its error is a disposal failure.
	close func(d *driver) error
}

// loop runs the agent's turns in its own goroutine: a turn a follow-up
// opened, or, when a message was queued or steered (woken) and no
// maintenance task holds the agent, a turn it opens; after a turn that
// leaves input pending the next opens at once (turn.go). It ends when the
// agent is closed and idle, or after a failure of the replay. A turn a
// follow-up opened is run even when the agent was closed meanwhile (its
// turn/start is in the log: it ends, aborted).
func (d *driver) loop() {
	defer close(d.stopped)
	for {
		d.mu.Lock()
		announced := false
		for d.pre == nil && !d.closed && (d.running || !d.wantsTurnLocked() || d.maintenance > 0) {
			if !announced && d.quiescentLocked() {
				// quiescent: the bridge answers the prompts whose turns ended
				announced = true
				d.mu.Unlock()
				d.wire.idle()
				d.mu.Lock()
				continue
			}
			d.cond.Wait()
			announced = announced && d.quiescentLocked()
		}
		t := d.pre
		d.pre = nil
		if t == nil && d.closed {
			d.mu.Unlock()
			return
		}
		d.running = true
		d.mu.Unlock()
		err := d.runTurns(t)
		d.mu.Lock()
		d.running = false
		d.yields++ // an idle agent: the host yields
		if err != nil && d.err == nil {
			d.err = err
			d.closed = true
		}
		d.cond.Broadcast()
		d.mu.Unlock()
	}
}

// runTurns runs t (nil: a turn it opens, the agent woke from idle: the
// host yielded) and, while a turn leaves input pending, the next ones.
func (d *driver) runTurns(t *openedTurn) error {
	if t == nil {
		d.gate.Pump()
	}
	for {
		if t == nil {
			var err error
			if t, err = d.openTurn(); err != nil {
				return err
			}
		}
		more, err := d.turn(t)
		if err != nil || !more {
			return err
		}
		t = nil
	}
}

// queue splices m into the next-turn inbox. An idle agent (no turn, no
// maintenance task) opens the turn that claims it at once, before queue
// returns, as upstream's loop does: its followup starts the driver, whose
// turn appends turn/start and claims the inbox before its first await
// (the host yielded first: the agent was idle). The turn's steps run in
// the loop's goroutine.
func (d *driver) queue(m userMessage) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return errors.New("the agent is disposed")
	}
	open := !d.running && d.pre == nil && d.maintenance == 0
	if open {
		d.running = true // reserved: the loop waits for the opened turn
	}
	d.mu.Unlock()
	if open {
		d.gate.Pump()
	}
	err := d.inbox.add(nextTurn, m)
	d.mu.Lock()
	if err == nil {
		if d.firstTask == "" && m.kind == "user" {
			d.firstTask = messageText(m)
		}
		d.woken = true
	}
	d.cond.Broadcast()
	d.mu.Unlock()
	if !open {
		return err
	}
	var t *openedTurn
	if err == nil {
		t, err = d.openTurn()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		d.pre = t
	} else if d.err == nil {
		d.err, d.closed = err, true // our log could not be written: the replay fails
	}
	d.running = false
	d.cond.Broadcast()
	return err
}

// Followup queues m as a later turn ([stack.Loop]).
func (d *driver) Followup(m stack.Message) error {
	if d.hooks.followup != nil {
		if err := d.hooks.followup(d); err != nil {
			return err
		}
	}
	return d.queue(relayedMessage(m))
}

// Steer queues m for the agent's next step (the next-step inbox); an idle
// agent wakes ([stack.Loop]).
func (d *driver) Steer(m stack.Message) error {
	if err := d.inbox.add(nextStep, relayedMessage(m)); err != nil {
		return err
	}
	d.mu.Lock()
	d.woken = true
	d.cond.Broadcast()
	d.mu.Unlock()
	return nil
}

// relayedMessage is the log's form of a message the delegation runtime
// delivers (a child's prompt, a follow-up, a report, a settlement notice):
// its blocks as they came.
func relayedMessage(m stack.Message) userMessage {
	um := userMessage{Content: make([]pipeline.Block, len(m.Content)), Source: m.Source, Role: "user", ID: m.ID, relayed: m.Content}
	for i, raw := range m.Content {
		json.Unmarshal(raw, &um.Content[i]) // a block that is not one stays empty: only its type and text are read
	}
	var k kindOnly
	if raw, err := json.Marshal(m.Source); err == nil {
		json.Unmarshal(raw, &k)
	}
	um.kind = k.Kind
	return um
}

// messageText is the text of a message's text blocks.
func messageText(m userMessage) string {
	s := ""
	for _, b := range m.Content {
		if b.Type == "text" {
			s += b.Text
		}
	}
	return s
}

// task is the first user prompt the agent was given.
func (d *driver) task() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.firstTask
}

// Running reports whether a turn runs ([stack.Loop]).
func (d *driver) Running() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running || d.pre != nil
}

// Idle reports quiescence ([stack.Loop]): no turn runs, nothing queued
// waits to run, no maintenance task runs, no first step is held.
func (d *driver) Idle() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.idleLocked()
}

func (d *driver) idleLocked() bool {
	return d.closed && d.pre == nil && !d.running || d.quiescentLocked()
}

// quiescentLocked: the agent is live and has nothing to do (d.mu held).
func (d *driver) quiescentLocked() bool {
	return !d.running && d.pre == nil && !d.wantsTurnLocked() && d.maintenance == 0 && d.held == 0
}

// wantsTurnLocked reports whether a message queued or steered since the
// last turn opened still waits (d.mu held): an idle agent then runs a turn
// for it. A message the last turn claimed clears the wish; a job's notice
// alone never makes one (upstream injects it without waking the agent: it
// waits for the next turn).
func (d *driver) wantsTurnLocked() bool {
	if d.woken && !d.inbox.hasPending() {
		d.woken = false
	}
	return d.woken
}

// WhenIdle returns once the agent is quiescent, or ctx ended
// ([stack.Loop]).
func (d *driver) WhenIdle(ctx context.Context) error {
	return d.waitUntil(ctx, d.idleLocked)
}

// waitUntil waits until cond holds (d.mu held while it is checked).
func (d *driver) waitUntil(ctx context.Context, cond func() bool) error {
	stop := context.AfterFunc(ctx, d.wake)
	defer stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for !cond() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d.cond.Wait()
	}
	return nil
}

// wake makes the waiters look again.
func (d *driver) wake() {
	d.mu.Lock()
	d.cond.Broadcast()
	d.mu.Unlock()
}

// Cancel aborts the running turn ([stack.Loop]); without keepInbox the
// queued later turns are dropped too (a disposal), with it they stay (an
// interrupt).
func (d *driver) Cancel(keepInbox bool) { d.cancelTurn(errParentCancel, keepInbox) }

// cancelTurn aborts the running turn with cause.
func (d *driver) cancelTurn(cause error, keepInbox bool) {
	if !keepInbox {
		d.inbox.drop(nextTurn)
	}
	d.mu.Lock()
	cancel, running := d.turnCancel, d.running || d.pre != nil
	d.woken = false // what stays queued is parked until another message wakes the agent
	d.cond.Broadcast()
	d.mu.Unlock()
	if running && cancel != nil {
		cancel(cause)
	}
}

// Close stops the loop once its turn ended ([stack.Loop]); the fixture's
// disposal failure is its error.
func (d *driver) Close() error {
	d.mu.Lock()
	d.closed = true
	d.cond.Broadcast()
	d.mu.Unlock()
	<-d.stopped
	if d.hooks.close != nil {
		return d.hooks.close(d)
	}
	return nil
}

// yield records that the host yielded while this agent worked: it awaits
// I/O (a tool call that yields, a fixture's wait) or went idle. A
// background child started by it runs from its next yield on.
func (d *driver) yield() {
	d.mu.Lock()
	d.yields++
	d.cond.Broadcast()
	d.mu.Unlock()
}

// holdUntilYield keeps child's first turn from entering its first step
// until d yields after now: upstream's host runs a background child's step
// only once the agent that started it awaits something or goes idle (its
// own non-yielding work, a model call that answers at once, comes first);
// the child's turn/start and claim are written at once, when its prompt is
// queued (see queue).
func (d *driver) holdUntilYield(child *driver) {
	d.mu.Lock()
	mark := d.yields
	d.mu.Unlock()
	child.mu.Lock()
	child.held++
	child.mu.Unlock()
	go func() {
		d.waitUntil(d.base, func() bool { return d.yields > mark || d.closed })
		child.mu.Lock()
		child.held--
		child.cond.Broadcast()
		child.mu.Unlock()
	}()
}

// beginMaintenance and endMaintenance bracket a task that keeps an idle
// agent busy (it starts no turn meanwhile, and is not quiescent).
func (d *driver) beginMaintenance() {
	d.mu.Lock()
	d.maintenance++
	d.mu.Unlock()
}

func (d *driver) endMaintenance() {
	d.mu.Lock()
	d.maintenance--
	d.cond.Broadcast()
	d.mu.Unlock()
}

// turns is the number of the last turn started.
func (d *driver) turns() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.turnNo
}

// turnEnded reports the reason turn ended with (false while it runs).
func (d *driver) turnEnded(turn int) (map[string]any, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.ended[turn]
	return r, ok
}
