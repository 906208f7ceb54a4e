package goal

import (
	"fmt"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// SourceKind is the source kind of a goal round's user message.
const SourceKind = "goal"

// RoundSource is a goal round's message source: the goal, its revision
// and the round (1-based).
type RoundSource struct {
	Kind     string `json:"kind"`
	GoalID   string `json:"goalId"`
	Revision int64  `json:"revision"`
	Round    int64  `json:"round"`
}

// roundFormat is the goal round's instruction (VERBATIM).
const roundFormat = "<goal_round>\nObjective: %s\nRound: %d/%d\n\nContinue working toward the objective in this same session. Treat the current workspace, tool results, and durable session state as authoritative; inspect them instead of assuming earlier narration is still current. Make concrete progress and verify the result. Before claiming completion, gather evidence that the whole objective is achieved, read the current goal, and mark it complete. If work remains, leave the goal active for the next round. Follow the configured goal-tool policy before reporting a blocker.\n</goal_round>"

// RoundPrompt is the instruction of round n of g.
func RoundPrompt(g Goal, n int64) string {
	return fmt.Sprintf(roundFormat, jsjson.Quote(g.Objective), n, g.MaxGoalRounds)
}

// Round is the next goal round a quiescent session starts: its source
// and its instruction.
type Round struct {
	Source RoundSource
	Text   string
}

// NextRound is upstream's goal-round driver at quiescence (a session's
// agent idle, no other prompt queued): an active, armed goal starts its
// next round; one whose rounds are spent is blocked instead (code
// round-limit) and starts none. nil: no round.
func (s *Service) NextRound(log *session.Log) (*Round, error) {
	v, err := s.Get(log)
	if err != nil || v == nil || v.Phase != PhaseActive || v.Activation != Armed {
		return nil, err
	}
	if v.RoundsStarted >= v.MaxGoalRounds {
		reason := BlockReason{Code: "round-limit", Message: fmt.Sprintf("Goal reached its configured limit of %d rounds.", v.MaxGoalRounds)}
		_, err := s.Block(log, Ref{ID: v.ID, Revision: v.Revision}, reason)
		return nil, err
	}
	n := v.RoundsStarted + 1
	return &Round{Source: RoundSource{Kind: SourceKind, GoalID: v.ID, Revision: v.Revision, Round: n}, Text: RoundPrompt(v.Goal, n)}, nil
}
