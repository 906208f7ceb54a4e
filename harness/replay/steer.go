package replay

import (
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
)

// webSteers are a web session's steer steps ([recording.SteerOp]): the
// messages its user steered into a running turn, each delivered at its
// point ([recording.SteerPoint]) through the same inbox and loop a prompt
// goes through.
//
// Upstream's steering.e2e.ts types the message while the turn runs, so the
// web app queues it (session.prompt, mode queue: the agent's followup, a
// next-turn row), then presses the row's Steer (session.updateQueue,
// action steer: the row removed from next-turn, outcome canceled, and the
// same message steered into next-step; refused as steer-unavailable once
// the turn no longer runs). The turn's next claim enters it, so the model
// reply after the one it was steered after is the first to see it. The
// user does this while the step of that reply runs (the e2e file while
// its question is pending); the replay does it as that step ends, before
// the turn's next claim or its end: the last moment at which the message
// still lands where it was recorded, reached in the loop itself, so no
// race with a fast step decides it.
type webSteers struct {
	mu  sync.Mutex
	due []*dueSteer
}

// dueSteer is one steer step: the message, its point, whether it was
// delivered.
type dueSteer struct {
	index     int // its place in the steps
	text      string
	at        recording.SteerPoint
	delivered bool
}

// newWebSteers are the steer steps of rec (nil when it has none).
func newWebSteers(rec *recording.Recording) *webSteers {
	var w webSteers
	for i, s := range rec.Input.Steps {
		if s.Op == recording.SteerOp && s.At != nil {
			w.due = append(w.due, &dueSteer{index: i, text: s.Text, at: *s.At})
		}
	}
	if len(w.due) == 0 {
		return nil
	}
	return &w
}

// countSteers is the number of rec's steer steps.
func countSteers(rec *recording.Recording) int {
	n := 0
	for _, s := range rec.Input.Steps {
		if s.Op == recording.SteerOp {
			n++
		}
	}
	return n
}

// stepEnded delivers the steers due after step of turn (an
// agentHooks.stepEnded of the session's agent), as the e2e files do: each
// typed while the turn runs is queued as a row (the web app's Enter), all
// of them first, then each is steered in order, a queued row by its Steer
// (one, or the empty-draft shortcut flushing the queue: FIFO), a direct
// one by the composer's steer shortcut ([recording.SteerPoint.Direct]).
func (w *webSteers) stepEnded(d *driver, turn, step int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var due []*dueSteer
	msgs := map[*dueSteer]userMessage{}
	for _, s := range w.due {
		if !s.delivered && s.at.Turn == turn && s.at.Step == step {
			due = append(due, s)
			msgs[s] = promptMessage([]pipeline.Block{pipeline.TextBlock(s.text)})
		}
	}
	for _, s := range due {
		if s.at.Direct {
			continue
		}
		if err := d.queue(msgs[s]); err != nil {
			return fmt.Errorf("steps[%d] %s: queue the message: %w", s.index, recording.SteerOp, err)
		}
	}
	for _, s := range due {
		steer := d.steerQueued
		if s.at.Direct {
			steer = d.steer
		}
		if err := steer(msgs[s]); err != nil {
			return fmt.Errorf("steps[%d] %s: %w", s.index, recording.SteerOp, err)
		}
		s.delivered = true
	}
	return nil
}

// delivered reports whether the steer step i was delivered.
func (w *webSteers) delivered(i int) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.due {
		if s.index == i {
			return s.delivered
		}
	}
	return false
}

// steer checks the client's steer step i, which the session's agent
// delivered at its point while the turn ran (stepEnded): one that was
// not (the turn ended, failed or was aborted before that step ended) is
// flagged, as upstream's e2e file fails when its steer does not land.
func (c *client) steer(i int, step recording.Step) {
	if c.steers.delivered(i) {
		return
	}
	c.flag(fmt.Sprintf("%s:%d steps[%d] %s: %q was not steered in: the recording steers it as turn %d's step %d ends, which the replay did not reach",
		recording.SessionFile, step.At.Line, i, recording.SteerOp, step.Text, step.At.Turn, step.At.Step))
}
