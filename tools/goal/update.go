package goal

import (
	"fmt"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline"
)

// WrapupPlugin is the source plugin of the closing-message instruction.
const WrapupPlugin = "tool-goal"

// Wrap-up texts (VERBATIM): the instruction a goal round that reports
// complete or blocked gets for its next step.
const (
	wrapupTail     = "Report only what earlier rounds and tool results in this session actually establish; when a detail is not in the session, say so instead of inventing it. "
	completeFormat = "<goal_complete>\nObjective: %s\nThe goal is marked complete and this autonomous run is ending. Write the closing message to the user now: state the outcome, summarize what was done and how it was verified, and point to the concrete results (files, commits, or other artifacts). " + wrapupTail + "Note anything the user should review or do next. Address the user directly. Do not call any more tools in this run; further work waits for the user's next instruction.\n</goal_complete>"
	blockedFormat  = "<goal_blocked>\nObjective: %s\nBlocked: %s\nThe goal is marked blocked and this autonomous run is ending. Write the closing message to the user now: state what has been completed so far, describe the concrete blocking condition and what you tried, and say exactly what you need from the user to continue. " + wrapupTail + "Address the user directly. Do not call any more tools in this run; further work waits for the user's next instruction.\n</goal_blocked>"
)

// WrapupText is the closing-message instruction after a goal round
// reports complete (blockedReason nil) or blocked.
func WrapupText(objective string, blockedReason *string) string {
	if blockedReason == nil {
		return fmt.Sprintf(completeFormat, jsjson.Quote(objective))
	}
	return fmt.Sprintf(blockedFormat, jsjson.Quote(objective), jsjson.Quote(*blockedReason))
}

// updateArgs are update_goal's arguments.
type updateArgs struct {
	GoalID        string   `json:"goal_id"`
	Revision      float64  `json:"revision"`
	Action        string   `json:"action"`
	Objective     *string  `json:"objective"`
	MaxGoalRounds *float64 `json:"max_goal_rounds"`
	BlockedReason *string  `json:"blocked_reason"`
}

// Strict-schema fillers: an empty string or a zero round cap means the
// field was not given.
func (a updateArgs) objective() *string {
	if a.Objective == nil || *a.Objective == "" {
		return nil
	}
	return a.Objective
}

func (a updateArgs) maxRounds() *float64 {
	if a.MaxGoalRounds == nil || *a.MaxGoalRounds == 0 {
		return nil
	}
	return a.MaxGoalRounds
}

func (a updateArgs) blocked() bool { return a.BlockedReason != nil && *a.BlockedReason != "" }

const invalidUpdate = "GOAL_TOOL_INVALID_UPDATE"

// ref is the compare-and-set ref the arguments name.
func (a updateArgs) ref() (Ref, error) {
	if a.GoalID == "" || a.GoalID != jsjson.Trim(a.GoalID) || !SafeInteger(a.Revision) || a.Revision < 1 {
		return Ref{}, refuse(invalidUpdate, "goal_id must be non-empty and revision must be a positive safe integer")
	}
	return Ref{ID: a.GoalID, Revision: int64(a.Revision)}, nil
}

// update is update_goal: edit, pause and resume on a direct human turn;
// complete and blocked also in the goal's exact round, whose closing
// instruction joins the next step.
func (cfg Config) update(call *pipeline.Call) (*View, []pipeline.ContextMessage, error) {
	var a updateArgs
	if err := call.DecodeArgs(&a); err != nil {
		return nil, nil, err
	}
	x, err := authenticate(call)
	if err != nil {
		return nil, nil, err
	}
	ref, err := a.ref()
	if err != nil {
		return nil, nil, err
	}
	switch a.Action {
	case "edit":
		if err := x.requireDirectHuman(); err != nil {
			return nil, nil, err
		}
		if a.blocked() {
			return nil, nil, refuse(invalidUpdate, "blocked_reason is valid only with action blocked")
		}
		v, err := cfg.Goals.Edit(x.log, ref, a.objective(), a.maxRounds())
		return v, nil, err
	case "pause", "resume":
		if err := x.requireDirectHuman(); err != nil {
			return nil, nil, err
		}
		if a.objective() != nil || a.maxRounds() != nil || a.blocked() {
			return nil, nil, refuse(invalidUpdate, "objective and max_goal_rounds are valid only with action edit; blocked_reason is valid only with action blocked")
		}
		if a.Action == "pause" {
			v, err := cfg.Goals.Pause(x.log, ref)
			return v, nil, err
		}
		v, err := cfg.Goals.Resume(x.log, ref)
		return v, nil, err
	}
	return cfg.conclude(x, a, ref)
}

// conclude is update_goal's complete and blocked.
func (cfg Config) conclude(x *execution, a updateArgs, ref Ref) (*View, []pipeline.ContextMessage, error) {
	round, err := cfg.completionAuthority(x)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case a.objective() != nil || a.maxRounds() != nil:
		return nil, nil, refuse(invalidUpdate, "objective and max_goal_rounds are valid only with action edit")
	case a.Action == "complete" && a.blocked():
		return nil, nil, refuse(invalidUpdate, "blocked_reason is valid only with action blocked")
	case a.Action == "blocked" && (a.BlockedReason == nil || jsjson.Trim(*a.BlockedReason) == ""):
		return nil, nil, refuse(invalidUpdate, "blocked_reason is required with action blocked")
	case a.Action == "blocked" && round != nil && round.RoundsStarted < int64(cfg.BlockedAfterConsecutiveRounds):
		return nil, nil, refuse("GOAL_TOOL_BLOCK_THRESHOLD", fmt.Sprintf("blocked requires at least %d consecutive goal rounds; current round is %d", cfg.BlockedAfterConsecutiveRounds, round.RoundsStarted))
	}
	var v *View
	var reason *string
	if a.Action == "complete" {
		v, err = cfg.Goals.Complete(x.log, ref)
	} else {
		reason = a.BlockedReason
		v, err = cfg.Goals.Block(x.log, ref, BlockReason{Code: "model-reported", Message: *a.BlockedReason})
	}
	if err != nil || round == nil {
		return v, nil, err
	}
	wrap := pipeline.ContextMessage{Plugin: WrapupPlugin, Texts: []string{WrapupText(v.Objective, reason)}, Form: "notice", Summary: llm.BoundSummary(a.Action + ": " + v.Objective)}
	return v, []pipeline.ContextMessage{wrap}, nil
}

// completionAuthority is nil for a direct human turn, else the goal whose
// exact round this turn is; neither is refused.
func (cfg Config) completionAuthority(x *execution) (*View, error) {
	if x.directHuman() {
		return nil, nil
	}
	g, err := cfg.Goals.Get(x.log)
	if err != nil {
		return nil, err
	}
	if g != nil && x.goalRound(g) {
		return g, nil
	}
	return nil, refuse("GOAL_TOOL_AUTHORITY_REQUIRED", "complete and blocked require a direct human turn or the current goal round")
}
