package approval

import (
	"context"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

// newRaceService returns a fresh service and a session log with turn 1 open
// (closed when the test ends).
func newRaceService(t *testing.T) (*session.Log, *Service) {
	t.Helper()
	log := sessiontest.New(t, "s1", "/ws")
	sessiontest.StartTurn(t, log)
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return log, s
}

// TestNeverSwitchBeforeAskedIsHonoured: a switch to policy never that lands
// in the log before this request's approval/asked event (here: while the id
// is minted) decides the request; the policy is read after the asked event,
// not from a snapshot taken before it, so no answerer runs.
func TestNeverSwitchBeforeAskedIsHonoured(t *testing.T) {
	log, s := newRaceService(t)
	s.newID = func() string {
		if _, err := SetSessionPolicy(log, Never); err != nil {
			t.Fatal(err)
		}
		return NewUUID()
	}
	asked := false
	s.Answer(func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
		asked = true
		return pipeline.AllowedOnce, nil
	})
	got, err := s.Request(context.Background(), pipeline.ApprovalRequest{Agent: &pipeline.Agent{ID: "a", Session: log}, ToolName: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	if got != pipeline.Rejected || asked {
		t.Errorf("outcome %s, answerer asked %v; want rejected without asking", got, asked)
	}
}

// TestLateAnswerRacingCancellationIsDiscarded: an answer that arrives while
// the caller cancels (here: the cancellation lands after the answer reached
// the service and before it was accepted) is discarded; the outcome and the
// audit say cancelled.
func TestLateAnswerRacingCancellationIsDiscarded(t *testing.T) {
	log, s := newRaceService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.answered = cancel
	s.Answer(func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
		return pipeline.AllowedOnce, nil
	})
	got, err := s.Request(ctx, pipeline.ApprovalRequest{Agent: &pipeline.Agent{ID: "a", Session: log}, ToolName: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	if got != pipeline.Cancelled {
		t.Errorf("outcome %s for an answer that raced the cancellation, want cancelled", got)
	}
	events, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Type != session.KindApprovalDecided || !strings.Contains(string(last.Data), `"outcome":"cancelled"`) {
		t.Errorf("last event %s %s, want approval/decided cancelled", last.Type, last.Data)
	}
}
