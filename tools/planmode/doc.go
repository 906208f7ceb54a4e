// Package planmode is upstream's plan mode (dsh-plan-mode): a logged,
// per-session collaboration state, the user's /plan command, the
// model-facing exit_plan_mode tool that presents a plan for the user's
// review, and the deployment's plan:policy prompt section while it is
// active.
//
// # State
//
// The state in force is folded from the session log ([Fold]: the last
// plan/mode {active} wins; none is inactive), so a resumed log restores
// it. A selection made while no turn is open is appended at once
// ([Service.Set]: committed); one made during an open turn stays pending
// until the next step the agent enters ([Service.OnBoundary], the step's
// pre-step), where it is appended. Selecting the state in force, or the
// one already pending, does nothing.
//
// # What plan mode enforces
//
// As upstream's, plan mode changes the prompt (the plan:policy section,
// [Service.Sections]) and gates exit_plan_mode, nothing else: the tool
// catalog stays the same across modes, and the sandbox mode and approval
// policy confine every call independently of it (they neither read nor
// write plan state). exit_plan_mode outside plan mode is refused ("only
// available in plan mode"); its plan must start with a # heading; the
// review is a question to the user (intent plan-review, options Approve
// and Keep planning). Approve ends plan mode at the next step (a pending
// selection, appended at that step's start, never narrated); anything
// else is an error result carrying the user's feedback, and the session
// stays in plan mode.
//
// # Imports
//
// pipeline, pipeline/session, tools/askuser (the question's shape) and
// tools/toolreg; never stack or harness.
package planmode
