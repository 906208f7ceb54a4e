package goal

import (
	"strings"
	"testing"
)

// TestUpdateRules: update_goal's refusals the table of TestGoalTools
// leaves out: a revision that is not a safe integer, a blocked_reason
// beside edit or pause, max_goal_rounds beside complete; and edit and
// pause need a direct human turn (a goal round gives none).
func TestUpdateRules(t *testing.T) {
	invalid := "Error: goal_id must be non-empty and revision must be a positive safe integer"
	for _, tc := range []struct {
		name, args, want string
		round            bool // called in the goal's round 1, not a human turn
	}{
		{"a fractional revision", `{"goal_id":"goal-g1","revision":1.5,"action":"pause"}`, invalid, false},
		{"a revision past the safe integers", `{"goal_id":"goal-g1","revision":9007199254740992,"action":"pause"}`, invalid, false},
		{"the last safe integer is a revision", `{"goal_id":"goal-g1","revision":9007199254740991,"action":"pause"}`, `Error: stale goal ref "goal-g1" revision 9007199254740991; current is "goal-g1" revision 1`, false},
		{"edit with a blocked_reason", `{"goal_id":"goal-g1","revision":1,"action":"edit","objective":"x","blocked_reason":"r"}`, "Error: blocked_reason is valid only with action blocked", false},
		{"pause with a blocked_reason", `{"goal_id":"goal-g1","revision":1,"action":"pause","blocked_reason":"r"}`, "Error: objective and max_goal_rounds are valid only with action edit; blocked_reason is valid only with action blocked", false},
		{"complete with max_goal_rounds", `{"goal_id":"goal-g1","revision":1,"action":"complete","max_goal_rounds":3}`, "Error: objective and max_goal_rounds are valid only with action edit", false},
		{"edit in a goal round", `{"goal_id":"goal-g1","revision":1,"action":"edit","objective":"x"}`, "Error: this goal operation requires a direct human turn on a top-level agent", true},
		{"pause in a goal round", `{"goal_id":"goal-g1","revision":1,"action":"pause"}`, "Error: this goal operation requires a direct human turn on a top-level agent", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.humanTurn()
			f.call(CreateName, `{"objective":"ship it","max_goal_rounds":7}`)
			if tc.round {
				f.roundTurn(1, 1)
			}
			if r := f.call(UpdateName, tc.args); !r.IsError || r.Text() != tc.want {
				t.Errorf("update_goal %s = %q (error %v), want %q", tc.args, r.Text(), r.IsError, tc.want)
			}
		})
	}
	f := newFixture(t)
	f.humanTurn()
	if r := f.call(CreateName, `{"objective":"x","max_goal_rounds":9007199254740992}`); !r.IsError || r.Text() != "Error: maxGoalRounds must be a positive safe integer" {
		t.Errorf("create past the safe integers: %q", r.Text())
	}
	if _, err := New(Config{Goals: &Service{}, BlockedAfterConsecutiveRounds: -1}); err == nil {
		t.Error("a negative blocked threshold accepted")
	}
}

// TestServiceRules: the domain's rules the tools' tests leave out: a
// resume of a goal whose rounds are spent, a block reason's code
// kebab-case, an edit keeping the activation, and a clock that went back
// never dating a change before the goal's last update.
func TestServiceRules(t *testing.T) {
	f := newFixture(t)
	f.humanTurn()
	f.call(CreateName, `{"objective":"ship it","max_goal_rounds":1}`)
	f.roundTurn(1, 1)
	f.humanTurn()
	if _, err := f.goals.Pause(f.log, Ref{"goal-g1", 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.goals.Resume(f.log, Ref{"goal-g1", 2}); err == nil || !strings.Contains(err.Error(), `goal "goal-g1" exhausted 1 goal rounds; increase maxGoalRounds before resuming`) {
		t.Errorf("resume with the rounds spent: %v", err)
	}

	g := newFixture(t)
	g.humanTurn()
	g.call(CreateName, `{"objective":"ship it"}`)
	if _, err := g.goals.Block(g.log, Ref{"goal-g1", 1}, BlockReason{Code: "Disk_full", Message: "m"}); err == nil || !strings.Contains(err.Error(), "lower-kebab-case code") {
		t.Errorf("a block reason's code not kebab-case: %v", err)
	}
	if err := g.goals.Disarm(g.log); err != nil {
		t.Fatal(err)
	}
	if v, err := g.goals.Edit(g.log, Ref{"goal-g1", 1}, ptr("ship more"), nil); err != nil || v.Activation != Disarmed {
		t.Errorf("an edit of a disarmed goal: %+v, %v; want it disarmed", v, err)
	}

	h := newFixture(t)
	clock := int64(5000)
	h.goals.Now = func() int64 { clock -= 100; return clock }
	h.humanTurn()
	h.call(CreateName, `{"objective":"ship it"}`)
	v, err := h.goals.Pause(h.log, Ref{"goal-g1", 1})
	if err != nil || v.UpdatedAt != v.CreatedAt {
		t.Fatalf("a pause with the clock gone back: %+v, %v; want updatedAt kept at %d", v, err, v.CreatedAt)
	}
	if err := h.goals.Clear(h.log, Ref{"goal-g1", 2}); err != nil {
		t.Errorf("a clear with the clock gone back: %v", err)
	}
}

// TestCommandRules: /goal's answers the sequence of TestCommand leaves
// out: edit without an objective and no goal, the blocker of a blocked
// goal and the hint of a disarmed one, and edit followed by JavaScript's
// whitespace (\s: a byte order mark is, U+0085 is not).
func TestCommandRules(t *testing.T) {
	f := newFixture(t)
	if got, _ := f.goals.Command(f.log, "edit"); got.Text != "Goal editing requires a replacement objective.\n"+Usage {
		t.Errorf("/goal edit without a goal: %q", got.Text)
	}
	f.humanTurn()
	f.call(CreateName, `{"objective":"ship it"}`)
	if err := f.goals.Disarm(f.log); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.goals.Command(f.log, ""); !strings.HasSuffix(got.Text, "Activation: disarmed\n\nCommands: /goal edit <objective>, /goal resume, /goal clear") {
		t.Errorf("a disarmed goal: %q", got.Text)
	}
	if _, err := f.goals.Block(f.log, Ref{"goal-g1", 1}, BlockReason{Code: "disk-full", Message: "no space"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.goals.Command(f.log, ""); !strings.HasPrefix(got.Text, "Goal\nStatus: blocked\nBlocker: disk-full: no space\nObjective: ship it\n") {
		t.Errorf("a blocked goal: %q", got.Text)
	}
	for _, tc := range []struct{ raw, kind, objective string }{
		{"edit\ufeffx", "edit", "x"},
		{"edit\u00a0x", "edit", "x"},
		{"edit\u0085x", "create", "edit\u0085x"},
		{"EDIT x", "edit", "x"},
	} {
		if kind, objective := parseCommand(tc.raw); kind != tc.kind || objective != tc.objective {
			t.Errorf("parseCommand(%q) = %q, %q; want %q, %q", tc.raw, kind, objective, tc.kind, tc.objective)
		}
	}
}
