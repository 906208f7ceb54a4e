package goal

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dshsim/dshsim/internal/jsjson"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// CommandName is the human-facing command's name (/goal).
const CommandName = "goal"

// Usage is the /goal command's usage line (VERBATIM).
const Usage = "Usage: /goal [<objective>|clear|edit <objective>|pause|resume]"

// The outcomes of a command (command/done's kind).
const (
	CommandSuccess = "success"
	CommandError   = "error"
)

// CommandResult is what a /goal command answers (command/done's kind and
// text).
type CommandResult struct {
	Kind string
	Text string
}

// parseCommand reads the grammar /goal owns: nothing shows the goal,
// clear, pause and resume (any case) act on it, edit <objective> replaces
// its objective (edit in any case, then JavaScript's whitespace, \s), and
// anything else is a new objective.
func parseCommand(raw string) (kind, objective string) {
	in := jsjson.Trim(raw)
	switch ctl := strings.ToLower(in); {
	case in == "":
		return "show", ""
	case ctl == "clear", ctl == "pause", ctl == "resume":
		return ctl, ""
	case ctl == "edit":
		return "invalid-edit", ""
	case len(in) > 4 && strings.EqualFold(in[:4], "edit") && jsjson.IsSpace(firstRune(in[4:])):
		return "edit", jsjson.Trim(in[4:])
	}
	return "create", in
}

// Command runs a user's /goal command with its raw input on log's goal, as
// upstream's dsh-command-goal: the goal shown, created (armed, so a
// goal-round driver starts its rounds), edited, paused, resumed or
// cleared. A refusal of the goal domain is an error result with
// upstream's text; any other failure (the log) is the error.
func (s *Service) Command(log *session.Log, raw string) (CommandResult, error) {
	res, err := s.command(log, raw)
	var ge *pipeline.Error
	if errors.As(err, &ge) && ge.Name == ErrorName {
		return CommandResult{CommandError, "The goal command is not valid for the current state. Run /goal to view available commands."}, nil
	}
	return res, err
}

func (s *Service) command(log *session.Log, raw string) (CommandResult, error) {
	kind, objective := parseCommand(raw)
	cur, err := s.Get(log)
	if err != nil {
		return CommandResult{}, err
	}
	if cur == nil && kind != "show" && kind != "create" && kind != "invalid-edit" && kind != "clear" {
		return CommandResult{CommandError, fmt.Sprintf("No goal is currently set; /goal %s requires one. %s", kind, Usage)}, nil
	}
	var v *View
	title := ""
	switch kind {
	case "show":
		if cur == nil {
			return CommandResult{CommandSuccess, "No goal is currently set.\n" + Usage}, nil
		}
		v, title = cur, "Goal"
	case "invalid-edit":
		return CommandResult{CommandError, "Goal editing requires a replacement objective.\n" + Usage}, nil
	case "create":
		if cur != nil && cur.Phase != PhaseComplete {
			return CommandResult{CommandError, fmt.Sprintf("A goal is already %s. Use /goal edit <objective> to change it or /goal clear before replacing it.", cur.Phase)}, nil
		}
		v, err = s.Create(log, objective, nil)
		title = "Goal created"
	case "edit":
		if cur.Phase == PhaseComplete {
			v, err = s.Create(log, objective, nil)
			title = "Goal created"
			break
		}
		v, err = s.Edit(log, Ref{cur.ID, cur.Revision}, &objective, nil)
		title = "Goal updated"
	case "pause":
		v, err = s.Pause(log, Ref{cur.ID, cur.Revision})
		title = "Goal paused"
	case "resume":
		v, err = s.Resume(log, Ref{cur.ID, cur.Revision})
		title = "Goal resumed"
	case "clear":
		if cur == nil {
			return CommandResult{CommandSuccess, "No goal to clear."}, nil
		}
		if err = s.Clear(log, Ref{cur.ID, cur.Revision}); err != nil {
			return CommandResult{}, err
		}
		return CommandResult{CommandSuccess, "Goal cleared."}, nil
	}
	if err != nil {
		return CommandResult{}, err
	}
	return CommandResult{CommandSuccess, renderGoal(title, v)}, nil
}

// renderGoal is upstream's rendering of a goal for the user: title,
// status, the blocker when blocked, objective, rounds, activation and the
// commands that apply.
func renderGoal(title string, v *View) string {
	lines := []string{title, "Status: " + v.Phase}
	if v.Phase == PhaseBlocked && v.BlockedReason != nil {
		lines = append(lines, fmt.Sprintf("Blocker: %s: %s", v.BlockedReason.Code, v.BlockedReason.Message))
	}
	lines = append(lines, "Objective: "+v.Objective, fmt.Sprintf("Rounds: %d/%d", v.RoundsStarted, v.MaxGoalRounds), "Activation: "+v.Activation, "", "Commands: "+commandHint(v))
	return strings.Join(lines, "\n")
}

// commandHint names the commands meaningful in v's exact state.
func commandHint(v *View) string {
	switch {
	case v.Phase == PhaseActive && v.Activation == Armed:
		return "/goal edit <objective>, /goal pause, /goal clear"
	case v.Phase == PhaseComplete:
		return "/goal <objective>, /goal clear"
	}
	return "/goal edit <objective>, /goal resume, /goal clear"
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
