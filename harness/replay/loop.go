package replay

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

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
	// idle runs once the agent became quiescent and the bridge answered
	// its prompts (the agent's status idle); what it queues runs next.
	idle func(d *driver)
	// stepEnded runs once a step of a turn ended (its step/end written)
	// and the turn goes on running, before its next claim or its end:
	// what it steers in enters the next step (a web user's steer steps);
	// an error ends the replay.
	stepEnded func(d *driver, turn, step int) error
}

// phase is where an agent's turns stand.
type phase int

const (
	idle     phase = iota // no turn runs
	reserved              // a follow-up is opening a turn (queue): the loop waits for it
	opened                // a follow-up opened a turn: the loop runs it next
	running               // the loop runs turns
)

// schedule is when an agent's loop runs a turn. mu guards it; every change
// broadcasts cond, which the loop and the waiters (waitUntil) wait on.
type schedule struct {
	mu     sync.Mutex
	cond   *sync.Cond
	phase  phase
	opened *openedTurn             // the turn a follow-up opened (phase opened)
	turn   int                     // the number of the last turn started
	cancel context.CancelCauseFunc // aborts the turn that runs
	// woken: a message was queued or steered since the last turn opened
	// (see wantsTurnLocked).
	woken       bool
	maintenance int           // tasks that keep an idle agent from being quiescent
	held        int           // holds that keep an open turn from its first step (holdUntilYield)
	closed      chan struct{} // closed once the agent is: it opens no turn any more
	err         error         // a failure of the replay that closed it
	// reannounce: a change an idle hook reacts to (a goal's) happened
	// while the agent was quiescent: it announces its idle once more.
	reannounce bool
	// waited is the last turn started when the loop last waited in
	// await: it had handled that turn's end (announced its idle, or found
	// work still pending) and runs nothing until it is woken.
	waited int
}

func (s *schedule) init() {
	s.cond = sync.NewCond(&s.mu)
	s.closed = make(chan struct{})
}

// action is what an agent's loop does next.
type action int

const (
	wait      action = iota // nothing to run yet
	runOpened               // run the turn a follow-up opened
	openTurn                // open a turn for the message that woke the agent
	stop                    // the agent is closed and has nothing to run
)

// nextAction is what the loop does next in phase p: a turn a follow-up
// opened runs, even when the agent was closed meanwhile (its turn/start is
// in the log: it ends, aborted); a closed agent stops; an idle agent that a
// message woke (wants, asked of an idle agent only) and no maintenance task
// holds opens a turn; else it waits. Pure.
func nextAction(p phase, closed bool, maintenance int, wants func() bool) action {
	switch {
	case p == opened:
		return runOpened
	case closed:
		return stop
	case p != idle || !wants() || maintenance > 0:
		return wait
	}
	return openTurn
}

// nextLocked is the schedule's next action (s.mu held).
func (s *schedule) nextLocked(in *inbox) action {
	return nextAction(s.phase, s.isClosed(), s.maintenance, func() bool { return s.wantsTurnLocked(in) })
}

// wantsTurnLocked reports whether a message queued or steered since the
// last turn opened still waits (s.mu held): an idle agent then runs a turn
// for it. A message the last turn claimed clears the wish; a job's notice
// alone never makes one (upstream injects it without waking the agent: it
// waits for the next turn).
func (s *schedule) wantsTurnLocked(in *inbox) bool {
	if s.woken && !in.hasPending() {
		s.woken = false
	}
	return s.woken
}

// quiescentLocked: the agent is live and has nothing to do (s.mu held): no
// turn runs, nothing queued waits to run, no maintenance task runs, no
// first step is held.
func (s *schedule) quiescentLocked(in *inbox) bool {
	return s.phase == idle && !s.wantsTurnLocked(in) && s.maintenance == 0 && s.held == 0
}

// idleLocked: the agent is closed and runs no turn, or it is quiescent.
func (s *schedule) idleLocked(in *inbox) bool {
	return s.isClosed() && s.phase == idle || s.quiescentLocked(in)
}

func (s *schedule) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// closeLocked closes the agent (s.mu held); failure, when not nil, is what
// closed it (the first one is kept).
func (s *schedule) closeLocked(failure error) {
	if failure != nil && s.err == nil {
		s.err = failure
	}
	if !s.isClosed() {
		close(s.closed)
	}
	s.cond.Broadcast()
}

// failure is the failure of the replay that closed the agent (nil: none).
func (s *schedule) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// await waits until the loop has a turn to run and takes it (nil: a turn
// to open), or reports that the agent closed (false). Each time the agent
// becomes quiescent meanwhile, announce runs once: the bridge answers the
// prompts whose turns ended.
func (s *schedule) await(in *inbox, announce func()) (*openedTurn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	announced := false
	for {
		switch s.nextLocked(in) {
		case runOpened:
			t := s.opened
			s.opened, s.phase = nil, running
			return t, true
		case openTurn:
			s.phase = running
			return nil, true
		case stop:
			return nil, false
		}
		if s.reannounce {
			s.reannounce, announced = false, false
		}
		if !announced && s.quiescentLocked(in) {
			announced = true
			s.mu.Unlock()
			announce()
			s.mu.Lock()
			continue
		}
		s.waited = s.turn
		s.cond.Wait()
		announced = announced && s.quiescentLocked(in)
	}
}

// finish ends the loop's turns: the agent is idle; a failure of the
// replay (err) closes it.
func (s *schedule) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = idle
	if err != nil && s.err == nil {
		s.closeLocked(err)
	}
	s.cond.Broadcast()
}

// reserve reserves the opening of a turn for a follow-up when the agent is
// idle (open); a closed agent refuses the follow-up.
func (s *schedule) reserve() (open bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosed() {
		return false, errors.New("the agent is disposed")
	}
	open = s.phase == idle && s.maintenance == 0
	if open {
		s.phase = reserved
	}
	return open, nil
}

// handOver gives the loop the turn a follow-up opened (t), or, when it
// could not be opened, closes the agent with the failure (our log could not
// be written: the replay fails).
func (s *schedule) handOver(t *openedTurn, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = idle
	if err != nil {
		if s.err == nil {
			s.closeLocked(err)
		}
	} else {
		s.opened, s.phase = t, opened
	}
	s.cond.Broadcast()
}

// begin numbers a turn that opens, whose context cancel aborts; what woke
// the agent is claimed by it.
func (s *schedule) begin(cancel context.CancelCauseFunc) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turn++
	s.cancel = cancel
	s.woken = false
	return s.turn
}

// interrupt returns what aborts the turn that runs (nil: none runs); what
// stays queued is parked until another message wakes the agent.
func (s *schedule) interrupt() context.CancelCauseFunc {
	s.mu.Lock()
	defer s.mu.Unlock()
	cancel, live := s.cancel, s.phase != idle
	s.woken = false
	s.cond.Broadcast()
	if !live {
		return nil
	}
	return cancel
}

// update changes the schedule with fn (s.mu held) and wakes the waiters.
func (s *schedule) update(fn func(s *schedule)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s)
	s.cond.Broadcast()
}

// wake makes the waiters look again.
func (s *schedule) wake() { s.update(func(*schedule) {}) }

// waitUntil waits until cond holds (s.mu held while it is checked), or ctx
// ended.
func (s *schedule) waitUntil(ctx context.Context, cond func() bool) error {
	stop := context.AfterFunc(ctx, s.wake)
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !cond() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.cond.Wait()
	}
	return nil
}

// loop runs the agent's turns in its own goroutine, as the schedule says
// (await): a turn a follow-up opened, or a turn it opens for a message that
// woke it; after a turn that leaves input pending the next opens at once
// (turn.go). It ends when the agent is closed and idle, or after a failure
// of the replay.
func (d *driver) loop() {
	defer close(d.stopped)
	for {
		t, ok := d.sched.await(d.inbox, d.announceIdle)
		if !ok {
			return
		}
		d.sched.finish(d.runTurns(t))
		d.yield() // an idle agent: the host yields
	}
}

// announceIdle tells the bridge, then the idle hook, that the agent is
// idle.
func (d *driver) announceIdle() {
	d.wire.idle()
	if d.hooks.idle != nil {
		d.hooks.idle(d)
	}
}

// reannounce has a quiescent agent announce its idle once more (the idle
// hook runs again): a change it reacts to happened meanwhile, as
// upstream's goal-round driver drives on goal/changed.
func (d *driver) reannounce() { d.sched.update(func(s *schedule) { s.reannounce = true }) }

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
	open, err := d.sched.reserve()
	if err != nil {
		return err
	}
	if open {
		d.gate.Pump()
	}
	err = d.inbox.add(nextTurn, m)
	if err == nil && m.kind == "user" {
		d.record.mu.Lock()
		if d.record.task == "" {
			d.record.task = messageText(m)
		}
		d.record.mu.Unlock()
	}
	d.sched.update(func(s *schedule) { s.woken = s.woken || err == nil })
	if !open {
		return err
	}
	var t *openedTurn
	if err == nil {
		t, err = d.openTurn()
	}
	d.sched.handOver(t, err)
	return err
}

// Followup queues m as a later turn ([stack.Loop]). The first prompt of a
// background child a run_code program started returns only once the child
// yielded (it awaits I/O or went idle): the program awaits the nested call,
// and upstream's host runs the child while it does, so the program's next
// nested call sees the child as far as it got without waiting on anything.
func (d *driver) Followup(m stack.Message) error {
	if d.hooks.followup != nil {
		if err := d.hooks.followup(d); err != nil {
			return err
		}
	}
	yielded := d.host.nextYield()
	err := d.queue(relayedMessage(m))
	if err == nil && d.programStart.CompareAndSwap(true, false) {
		select {
		case <-yielded:
		case <-d.sched.closed:
		case <-d.base.Done():
		}
	}
	return err
}

// Steer queues m for the agent's next step (the next-step inbox); an idle
// agent wakes ([stack.Loop]).
func (d *driver) Steer(m stack.Message) error { return d.steer(relayedMessage(m)) }

// steer queues m for the agent's next step; an idle agent wakes.
func (d *driver) steer(m userMessage) error {
	if err := d.inbox.add(nextStep, m); err != nil {
		return err
	}
	d.sched.update(func(s *schedule) { s.woken = true })
	return nil
}

// errSteerUnavailable is upstream's steer-unavailable: the queued message
// is no longer queued, or no turn runs to take it.
var errSteerUnavailable = errors.New("steer-unavailable: current turn no longer accepts steering")

// steerQueued moves m, queued for a later turn, into the running turn's
// next step, as upstream's web app steers a queued row: the row removed
// from next-turn (outcome canceled), the same message steered. With no
// turn running, or m no longer queued, it is refused (errSteerUnavailable).
func (d *driver) steerQueued(m userMessage) error {
	queued := slices.ContainsFunc(d.inbox.pending(nextTurn), func(p userMessage) bool { return p.ID == m.ID })
	if !queued || !d.Running() {
		return errSteerUnavailable
	}
	if _, err := d.inbox.remove(m.ID); err != nil {
		return err
	}
	return d.steer(m)
}

// Inject queues m for the agent's next step without waking it (a
// lifecycle hook's context, upstream's agent.inject) ([stack.Loop]).
func (d *driver) Inject(m stack.Message) error {
	return d.inbox.add(nextStep, relayedMessage(m))
}

// relayedMessage is the log's form of a message the delegation runtime
// delivers (a child's prompt, a follow-up, a report, a settlement notice):
// its blocks as they came.
func relayedMessage(m stack.Message) userMessage {
	var k kindOnly
	if raw, err := json.Marshal(m.Source); err == nil {
		json.Unmarshal(raw, &k)
	}
	um := enteredMessage(k.Kind, m.Source, make([]pipeline.Block, len(m.Content)), m.ID)
	um.relayed = m.Content
	for i, raw := range m.Content {
		json.Unmarshal(raw, &um.Content[i]) // a block that is not one stays empty: only its type and text are read
	}
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

// Running reports whether a turn runs ([stack.Loop]).
func (d *driver) Running() bool {
	d.sched.mu.Lock()
	defer d.sched.mu.Unlock()
	return d.sched.phase != idle
}

// Idle reports quiescence ([stack.Loop]): no turn runs, nothing queued
// waits to run, no maintenance task runs, no first step is held.
func (d *driver) Idle() bool {
	d.sched.mu.Lock()
	defer d.sched.mu.Unlock()
	return d.sched.idleLocked(d.inbox)
}

// WhenIdle returns once the agent is quiescent, or ctx ended
// ([stack.Loop]).
//
// A background child a run_code program started is seen idle by the
// delegation runtime (which then settles it and tells its parent) only at
// its parent's next yield, while its parent works: upstream's settlement
// of such a child comes after the program's next nested calls (they see it
// idle, not settled) and arrives while the parent awaits I/O.
func (d *driver) WhenIdle(ctx context.Context) error {
	if err := d.sched.waitUntil(ctx, func() bool { return d.sched.idleLocked(d.inbox) }); err != nil || d.settleWith == nil {
		return err
	}
	p := d.settleWith
	if !p.Running() {
		return nil
	}
	select {
	case <-p.host.nextYield():
	case <-p.sched.closed:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
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
	if cancel := d.sched.interrupt(); cancel != nil {
		cancel(cause)
	}
}

// Close stops the loop once its turn ended ([stack.Loop]); the fixture's
// disposal failure is its error.
func (d *driver) Close() error {
	d.sched.update(func(s *schedule) { s.closeLocked(nil) })
	<-d.stopped
	if d.hooks.close != nil {
		return d.hooks.close(d)
	}
	return nil
}

// beginMaintenance and endMaintenance bracket a task that keeps an idle
// agent busy (it starts no turn meanwhile, and is not quiescent).
func (d *driver) beginMaintenance() {
	d.sched.mu.Lock()
	d.sched.maintenance++
	d.sched.mu.Unlock()
}

func (d *driver) endMaintenance() { d.sched.update(func(s *schedule) { s.maintenance-- }) }

// turns is the number of the last turn started.
func (d *driver) turns() int {
	d.sched.mu.Lock()
	defer d.sched.mu.Unlock()
	return d.sched.turn
}

// handled reports whether the loop has handled the end of turn n: it
// waited since (its idle announced, so the prompts whose turns ended are
// answered, or work still pending), or it stopped. Upstream's agent
// handles a turn's end and its idle in one tick, before a client's next
// message can arrive.
func (d *driver) handled(n int) bool {
	return d.sched.handled(n) || closed(d.stopped)
}

// handled reports whether the loop waited in await since turn n started.
func (s *schedule) handled(n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waited >= n
}
