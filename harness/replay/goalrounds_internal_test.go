package replay

import (
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/goal"
)

// TestFence: how a turn ended acts on the goal as upstream's goal-round
// driver does: an aborted round pauses an active armed goal, an abort
// outside a round disarms it, so do a token limit and a failure; a turn
// that completed or was blocked leaves it armed.
func TestFence(t *testing.T) {
	round := &goal.Round{}
	for _, tc := range []struct {
		name       string
		reason     string
		ran        *goal.Round
		phase, act string
	}{
		{"an aborted round pauses", session.EndAborted, round, goal.PhasePaused, goal.Disarmed},
		{"an abort outside a round disarms", session.EndAborted, nil, goal.PhaseActive, goal.Disarmed},
		{"a token limit disarms", session.EndMaxTokens, round, goal.PhaseActive, goal.Disarmed},
		{"a failure disarms", session.EndError, round, goal.PhaseActive, goal.Disarmed},
		{"a completed turn keeps it", session.EndCompleted, round, goal.PhaseActive, goal.Armed},
		{"a blocked turn keeps it", session.EndBlocked, round, goal.PhaseActive, goal.Armed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := sessiontest.New(t, "11111111-2222-4333-8444-555555555555", "/ws")
			goals := &goal.Service{}
			if _, err := goals.Create(log, "ship it", nil); err != nil {
				t.Fatal(err)
			}
			if err := fence(goals, log, session.EndReason{Kind: tc.reason}, tc.ran); err != nil {
				t.Fatal(err)
			}
			v, err := goals.Get(log)
			if err != nil || v.Phase != tc.phase || v.Activation != tc.act {
				t.Fatalf("goal %+v %v, want %s %s", v, err, tc.phase, tc.act)
			}
		})
	}
}
