// Package goal is upstream's same-session goal domain (dsh-goal) and its
// model-facing tools (dsh-tool-goal): get_goal, create_goal and
// update_goal, with their tool:goal prompt section (order 114).
//
// # Domain
//
// A session holds at most one current goal: {id, revision, objective,
// phase, maxGoalRounds, blockedReason when blocked}, phases active,
// paused, blocked and complete. Every mutation appends one goal/change
// event {kind: "goal/change", version: 1, operation, goal, roundsStarted,
// createdAt, updatedAt} to the session's log (between the tool's call and
// its result) and [Service] folds the state back from the log ([Fold], the
// strict fold: a malformed change or an illegal transition is an error
// naming the event's seq). A goal round's user message (source kind
// "goal", its goal id, revision and round) counts the round. Mutations are
// compare-and-set on the exact id and revision ("stale goal ref ...",
// GOAL_STALE_REVISION); "no current goal" is GOAL_NOT_FOUND; the domain's
// refusals are GoalError, upstream's texts and codes.
//
// Activation (armed or disarmed: whether another automatic round may
// start) is process-local, never logged: create and resume arm, pause,
// complete and block disarm, edit keeps it; a service reading a log it did
// not write (a resumed session) sees its goal disarmed, and a goal/change
// it did not commit disarms it.
//
// # Tools
//
// Each call needs an open turn of its session ("goal tools require an
// open model turn"). create_goal, and update_goal's edit, pause and
// resume, need a direct human turn: a user's own message in this turn of
// a top-level session (no parent). complete and blocked are also allowed
// in the goal's exact round, and then the closing-message instruction
// (<goal_complete> or <goal_blocked>, from plugin tool-goal, form notice)
// joins the next step as a context message; blocked in a round needs at
// least BlockedAfterConsecutiveRounds rounds (3). update_goal reads a
// strict schema's fillers (an empty objective or blocked_reason, a zero
// max_goal_rounds) as absent. The tools' own refusals are HarnessError.
// The value (and its text, JSON) is {goal: {id, revision, objective,
// phase, roundsStarted, maxGoalRounds, blockedReason?}, activation}, or
// {goal: null}.
//
// # Imports
//
// pipeline, pipeline/session, llm (the notice summary's bound),
// internal/jsjson and tools/toolreg; never stack or harness.
package goal
