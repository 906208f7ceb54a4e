package replay

import (
	"fmt"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/goal"
)

// roundDriven is the goal domain a goal-round driver drives for rec (nil:
// none): the goal suite's agent (the ACP agent's cordis.yml) and the web
// app's host plane mount dsh-goal-round-driver beside the goal tools; the
// headless one-shot app mounts the tools alone, and its process ends with
// the prompt's turn.
func roundDriven(rec *recording.Recording, st *stack.Stack) *goal.Service {
	if rec.Frontend != recording.Goal && rec.Frontend != recording.Web {
		return nil
	}
	return st.Goals()
}

// goalRounds adds upstream's goal-round driver (dsh-goal-round-driver) to
// the session agent's hooks h, when the stack composes the goal domain.
// Once the agent is idle (its prompts answered) with nothing else queued,
// an active and armed goal starts its next round: the round's instruction
// (source kind goal) is queued as the next turn, which the agent runs at
// once (goal.Service.NextRound; a goal whose rounds are spent is blocked
// instead). A turn that ends aborted pauses the goal when it ran a round
// (a round the user cancelled), else disarms it; one that ends at its
// token limit or failed disarms it.
func goalRounds(goals *goal.Service, h agentHooks) agentHooks {
	if goals == nil {
		return h
	}
	ended, idle := h.turnEnded, h.idle
	var round *goal.Round // the round queued last, until its turn ended
	h.turnEnded = func(d *driver, turn int) {
		if ended != nil {
			ended(d, turn)
		}
		reason, _ := d.turnEnded(turn)
		ran := round
		round = nil
		if err := fence(goals, d.log, reason, ran); err != nil {
			d.flag(fmt.Sprintf("goal-round driver: %v", err))
		}
	}
	h.idle = func(d *driver) {
		if idle != nil {
			idle(d)
		}
		if d.inbox.hasPending() {
			return // a prompt or a notice runs next
		}
		next, err := goals.NextRound(d.log)
		if err != nil || next == nil {
			if err != nil {
				d.flag(fmt.Sprintf("goal-round driver: %v", err))
			}
			return
		}
		m := newUserMessage(goal.SourceKind, next.Source, []pipeline.Block{pipeline.TextBlock(next.Text)})
		if err := d.inbox.add(nextTurn, m); err != nil {
			d.flag(fmt.Sprintf("goal-round driver: queue round %d: %v", next.Source.Round, err))
			return
		}
		round = next
		d.sched.update(func(s *schedule) { s.woken = true })
	}
	return h
}

// fence applies how a turn ended to the goal: an aborted round pauses an
// active armed goal, any other abort, a token limit or a failure disarms
// it.
func fence(goals *goal.Service, log *session.Log, reason session.EndReason, ran *goal.Round) error {
	switch reason.Kind {
	case session.EndAborted:
		v, err := goals.Get(log)
		if err != nil || v == nil || ran == nil || v.Phase != goal.PhaseActive || v.Activation != goal.Armed {
			if err == nil {
				err = goals.Disarm(log)
			}
			return err
		}
		_, err = goals.Pause(log, goal.Ref{ID: v.ID, Revision: v.Revision})
		return err
	case session.EndMaxTokens, session.EndError:
		return goals.Disarm(log)
	}
	return nil
}
