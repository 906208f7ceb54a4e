package goal

import (
	"fmt"
	"strings"
	"testing"
)

// TestCommand: a user's /goal commands in sequence on one session, each
// answer as upstream's dsh-command-goal gives it (kind and text), and the
// goal/change each one appends.
func TestCommand(t *testing.T) {
	f := newFixture(t)
	hint := func(h string) string { return "\n\nCommands: " + h }
	armed := hint("/goal edit <objective>, /goal pause, /goal clear")
	idle := hint("/goal edit <objective>, /goal resume, /goal clear")
	steps := []struct {
		raw, kind, text, op string // op: the operation of the goal/change appended ("": none)
	}{
		{"", CommandSuccess, "No goal is currently set.\n" + Usage, ""},
		{"   ", CommandSuccess, "No goal is currently set.\n" + Usage, ""},
		{"pause", CommandError, "No goal is currently set; /goal pause requires one. " + Usage, ""},
		{"resume", CommandError, "No goal is currently set; /goal resume requires one. " + Usage, ""},
		{"edit x", CommandError, "No goal is currently set; /goal edit requires one. " + Usage, ""},
		{"clear", CommandSuccess, "No goal to clear.", ""},
		{" ship it ", CommandSuccess, "Goal created\nStatus: active\nObjective: ship it\nRounds: 0/256\nActivation: armed" + armed, OpCreate},
		{"another", CommandError, "A goal is already active. Use /goal edit <objective> to change it or /goal clear before replacing it.", ""},
		{"edit", CommandError, "Goal editing requires a replacement objective.\n" + Usage, ""},
		{"EDIT  ship more ", CommandSuccess, "Goal updated\nStatus: active\nObjective: ship more\nRounds: 0/256\nActivation: armed" + armed, OpEdit},
		{"editorial", CommandError, "A goal is already active. Use /goal edit <objective> to change it or /goal clear before replacing it.", ""},
		{"Pause", CommandSuccess, "Goal paused\nStatus: paused\nObjective: ship more\nRounds: 0/256\nActivation: disarmed" + idle, OpPause},
		{"pause", CommandError, "The goal command is not valid for the current state. Run /goal to view available commands.", ""},
		{"resume", CommandSuccess, "Goal resumed\nStatus: active\nObjective: ship more\nRounds: 0/256\nActivation: armed" + armed, OpResume},
		{"", CommandSuccess, "Goal\nStatus: active\nObjective: ship more\nRounds: 0/256\nActivation: armed" + armed, ""},
		{"CLEAR", CommandSuccess, "Goal cleared.", OpClear},
		{"", CommandSuccess, "No goal is currently set.\n" + Usage, ""},
	}
	for i, s := range steps {
		before := len(f.changes())
		got, err := f.goals.Command(f.log, s.raw)
		if err != nil {
			t.Fatalf("step %d /goal %q: %v", i, s.raw, err)
		}
		if got.Kind != s.kind || got.Text != s.text {
			t.Errorf("step %d /goal %q:\n got %s %q\nwant %s %q", i, s.raw, got.Kind, got.Text, s.kind, s.text)
		}
		changes := f.changes()[before:]
		switch {
		case s.op == "" && len(changes) != 0:
			t.Errorf("step %d /goal %q appended %s, want nothing", i, s.raw, changes)
		case s.op != "" && (len(changes) != 1 || !strings.Contains(changes[0], `"operation":"`+s.op+`"`)):
			t.Errorf("step %d /goal %q appended %s, want one %s change", i, s.raw, changes, s.op)
		}
	}
}

// TestCommandCompleteGoal: a complete goal is replaced by a new objective
// or by edit (upstream creates a new goal for both), and its hint names
// the commands of a complete goal.
func TestCommandCompleteGoal(t *testing.T) {
	f := newFixture(t)
	n := 0
	f.goals.NewID = func() string { n++; return fmt.Sprintf("goal-g%d", n) }
	complete := func() {
		t.Helper()
		v, err := f.goals.Get(f.log)
		if err != nil || v == nil {
			t.Fatalf("no current goal: %v", err)
		}
		if _, err := f.goals.Complete(f.log, Ref{v.ID, v.Revision}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.goals.Create(f.log, "first", nil); err != nil {
		t.Fatal(err)
	}
	complete()
	got, err := f.goals.Command(f.log, "")
	if want := "Goal\nStatus: complete\nObjective: first\nRounds: 0/256\nActivation: disarmed\n\nCommands: /goal <objective>, /goal clear"; err != nil || got.Text != want {
		t.Fatalf("show: %q, %v; want %q", got.Text, err, want)
	}
	for i, raw := range []string{"edit second", "third"} {
		if i > 0 {
			complete()
		}
		got, err := f.goals.Command(f.log, raw)
		want := fmt.Sprintf("Goal created\nStatus: active\nObjective: %s\n", strings.Fields(raw)[len(strings.Fields(raw))-1])
		if err != nil || got.Kind != CommandSuccess || !strings.HasPrefix(got.Text, want) {
			t.Errorf("/goal %s on a complete goal: %s %q, %v; want %q...", raw, got.Kind, got.Text, err, want)
		}
	}
}
