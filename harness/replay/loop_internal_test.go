package replay

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
)

// TestNextAction: the loop's decision in each phase. An opened turn runs
// even once the agent is closed; a closed agent with nothing opened stops;
// only an idle agent that a message woke and no maintenance task holds
// opens a turn, and the wake is asked of an idle agent only.
func TestNextAction(t *testing.T) {
	for _, tc := range []struct {
		name        string
		p           phase
		closed      bool
		maintenance int
		wants       bool
		want        action
		asked       bool
	}{
		{"an opened turn runs", opened, false, 0, false, runOpened, false},
		{"an opened turn runs after a close", opened, true, 0, false, runOpened, false},
		{"a closed idle agent stops", idle, true, 0, true, stop, false},
		{"a closed agent stops while a turn still runs", running, true, 0, true, stop, false},
		{"a woken idle agent opens a turn", idle, false, 0, true, openTurn, true},
		{"an idle agent nothing woke waits", idle, false, 0, false, wait, true},
		{"a maintenance task holds a woken agent", idle, false, 1, true, wait, true},
		{"a reserved turn is the follow-up's to open", reserved, false, 0, true, wait, false},
		{"a running agent waits for its turns", running, false, 0, true, wait, false},
	} {
		asked := false
		got := nextAction(tc.p, tc.closed, tc.maintenance, func() bool { asked = true; return tc.wants })
		if got != tc.want || asked != tc.asked {
			t.Errorf("%s: %v (wake asked %v), want %v (asked %v)", tc.name, got, asked, tc.want, tc.asked)
		}
	}
}

// TestScheduleTransitions: a follow-up reserves an idle agent's turn and
// hands it over opened, or closes the agent with the failure that stopped
// it; a closed agent refuses a follow-up; the first failure is kept.
func TestScheduleTransitions(t *testing.T) {
	var s schedule
	s.init()
	if open, err := s.reserve(); !open || err != nil || s.phase != reserved {
		t.Fatalf("reserve on an idle agent: open %v, err %v, phase %v", open, err, s.phase)
	}
	if open, _ := s.reserve(); open {
		t.Error("a second follow-up reserved the turn being opened")
	}
	ot := &openedTurn{turn: 1}
	s.handOver(ot, nil)
	if s.phase != opened || s.opened != ot {
		t.Fatalf("handed over: phase %v, opened %v", s.phase, s.opened)
	}
	in := newInbox(&recorder{})
	if got, ok := s.await(in, func() { t.Error("announced with a turn to run") }); got != ot || !ok || s.phase != running {
		t.Fatalf("await took %v, %v (phase %v)", got, ok, s.phase)
	}
	first, second := errors.New("our log could not be written"), errors.New("later")
	s.finish(first)
	s.finish(second)
	if !s.isClosed() || s.failure() != first || s.phase != idle {
		t.Fatalf("after a failure: closed %v, failure %v, phase %v", s.isClosed(), s.failure(), s.phase)
	}
	if _, err := s.reserve(); err == nil {
		t.Error("a closed agent took a follow-up")
	}
	if _, ok := s.await(in, func() {}); ok {
		t.Error("a closed idle agent's loop did not stop")
	}
	var u schedule
	u.init()
	u.reserve()
	u.handOver(nil, first)
	if !u.isClosed() || u.failure() != first || u.phase != idle {
		t.Errorf("a turn that could not open: closed %v, failure %v, phase %v", u.isClosed(), u.failure(), u.phase)
	}
}

// TestHoldUntilYield: a child held by its parent enters its first step at
// the parent's next yield, not before; a yield before the hold does not
// count; closing the parent releases the hold too.
func TestHoldUntilYield(t *testing.T) {
	newAgent := func() *driver {
		d := &driver{base: context.Background()}
		d.sched.init()
		d.host.init()
		return d
	}
	held := func(c *driver) int {
		c.sched.mu.Lock()
		defer c.sched.mu.Unlock()
		return c.sched.held
	}
	parent, child := newAgent(), newAgent()
	before := parent.host.nextYield()
	parent.yield()
	waittest.Closed(t, before, "the channel of the yield before the hold")
	parent.holdUntilYield(child)
	time.Sleep(20 * time.Millisecond)
	if held(child) != 1 {
		t.Fatalf("the child is not held before its parent yields (held %d)", held(child))
	}
	parent.yield()
	waittest.Until(t, time.Millisecond, "the hold to be released by the yield", func() bool { return held(child) == 0 })

	parent, child = newAgent(), newAgent()
	parent.holdUntilYield(child)
	parent.sched.update(func(s *schedule) { s.closeLocked(nil) })
	waittest.Until(t, time.Millisecond, "the hold to be released by the parent's close", func() bool { return held(child) == 0 })
}

// TestHandledOnceTheLoopWaits: a turn's end is handled once the loop
// waits in await after it (its idle announced first), not when the turn
// ends: a client that moved on at the turn's end queued its next prompt
// before the earlier prompt was answered.
func TestHandledOnceTheLoopWaits(t *testing.T) {
	var s schedule
	s.init()
	s.begin(func(error) {})
	s.finish(nil)
	if s.handled(1) {
		t.Fatal("turn 1's end handled before the loop waited")
	}
	in := newInbox(&recorder{})
	announced := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.await(in, func() { close(announced) })
	}()
	waittest.Closed(t, announced, "the idle announced")
	waittest.Until(t, time.Millisecond, "the loop to wait", func() bool { return s.handled(1) })
	if s.handled(2) {
		t.Error("turn 2 handled before it started")
	}
	s.update(func(s *schedule) { s.closeLocked(nil) })
	waittest.Closed(t, done, "await to return once the agent closed")
}
