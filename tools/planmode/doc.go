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
// # The user-switch notice
//
// A user's switch is narrated to the model, as upstream's plan-mode
// plugin narrates it: a user message of source {kind plugin, plugin
// plan-mode, form notice, summary its text}, "The user switched this
// session to plan mode." or "The user switched this session back to the
// default mode." (VERBATIM, [Notice]). It is told against the mode in
// force at the last request/header: none before any model request, none
// when the switch lands on the mode the model was last told (a /plan off
// of a plan mode the model never saw, a selection cancelled back). A
// switch committed between turns returns it for the caller to queue for
// the next step without waking the agent (upstream's agent.inject); a
// pending one's step returns it ([Service.OnBoundary], computed before
// its plan/mode) to enter after the step's other messages. An approved
// plan's exit is never narrated: its result says so.
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
