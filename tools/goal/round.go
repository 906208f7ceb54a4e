package goal

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
