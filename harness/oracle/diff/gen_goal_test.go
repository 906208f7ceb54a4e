package diff

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestGenerateGoal: a goal case is the same on every call, its own (not
// the ACP case of the same numbers), fits the goal suite, has the suite's
// input and two turns (the first ending GOAL READY, the round's ending in
// a text), creates its goal before any update, and names no goal id the
// placeholder's pattern would match instead of the one the run made (the
// last match in the request wins). Across a few hundred cases it meets
// every goal area, both goal sizes, and rounds that complete and that do
// not.
func TestGenerateGoal(t *testing.T) {
	placeholder := regexp.MustCompile(regexp.QuoteMeta(goalID))
	literalID := regexp.MustCompile(`goal-[0-9a-f-]+`)
	areas := map[string]bool{}
	completes, open := 0, 0
	for i := range 300 {
		c := frontendCase(t, GoalProfile, 7, i)
		if err := oracle.GoalScriptError(c.Script); err != nil {
			t.Fatalf("case %d does not fit the goal suite: %v", i, err)
		}
		if err := c.Script.Check(); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(c.Script.Steps, goalSteps()) || len(c.Script.Turns) != 2 {
			t.Fatalf("case %d: steps %+v, %d turns", i, c.Script.Steps, len(c.Script.Turns))
		}
		first, round := c.Script.Turns[0], c.Script.Turns[1]
		if first[len(first)-1].Text != goalReady || round[len(round)-1].Text == "" {
			t.Errorf("case %d: the first turn ends %+v, the round %+v", i, first[len(first)-1], round[len(round)-1])
		}
		created := false
		for _, turn := range c.Script.Turns {
			for _, st := range turn {
				for _, call := range st.Calls {
					args := string(call.Args)
					if literalID.MatchString(placeholder.ReplaceAllString(args, "")) {
						t.Errorf("case %d: a literal goal id the placeholder would match: %s", i, args)
					}
					created = created || call.Name == "create_goal" && strings.Contains(args, "max_goal_rounds")
					if call.Name == "update_goal" && !created {
						t.Errorf("case %d: update_goal before the goal is created", i)
					}
					if call.Name == "update_goal" && strings.Contains(args, `"complete"`) {
						completes++
					}
				}
			}
		}
		if !slices.ContainsFunc(round, func(st oracle.Step) bool {
			return slices.ContainsFunc(st.Calls, func(c oracle.Call) bool { return c.Name == "update_goal" })
		}) {
			open++
		}
		for _, a := range c.Areas {
			areas[a] = true
		}
		if c.Settings != (oracle.Settings{MountSettings: oracle.MountSettings{Reminder: true}}) {
			t.Errorf("case %d: settings %s, want the reminder alone (danger-full-access, as the goal suite runs)", i, c.Settings)
		}
	}
	for _, a := range []string{AreaGoalTools, AreaGoalRounds, AreaGoalArgs} {
		if !areas[a] {
			t.Errorf("no case explores %s", a)
		}
	}
	if completes == 0 || open == 0 {
		t.Errorf("%d completing updates, %d rounds left open: want both", completes, open)
	}
	if a, b := GenerateGoal(7, 3).Script, Generate(7, 3).Script; reflect.DeepEqual(a.Turns, b.Turns) {
		t.Error("the goal case is the ACP case of the same numbers")
	}
	if slices.Contains(Profiles(), GoalProfile) || slices.Contains(Profiles(), HeadlessProfile) {
		t.Error("Profiles lists a front end's profile among the ACP ones (Generate would draw it)")
	}
}

// frontendCase is case i of seed of a front end's profile, after checking
// that it is the same on every call and is named and profiled as its
// profile's.
func frontendCase(t *testing.T, profile string, seed uint64, i int) *Case {
	t.Helper()
	p, ok := FrontendProfileOf(profile)
	if !ok {
		t.Fatalf("no front end's profile %s", profile)
	}
	c := p.Generate(seed, i)
	if !reflect.DeepEqual(c, p.Generate(seed, i)) {
		t.Fatalf("case %d differs between two calls", i)
	}
	if c.Profile != profile || c.Name != fmt.Sprintf("gen-%s-%d-%d", profile, seed, i) {
		t.Fatalf("case %d: profile %q, name %q", i, c.Profile, c.Name)
	}
	return c
}

// TestFrontendProfiles: each front end's profile names its generator and
// front end, and no other name is one.
func TestFrontendProfiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		fe   recording.Frontend
	}{{HeadlessProfile, recording.Headless}, {GoalProfile, recording.Goal}, {JSONRPCProfile, recording.JSONRPC}} {
		p, ok := FrontendProfileOf(tc.name)
		if !ok || p.Frontend != tc.fe || p.Generate(1, 0).Profile != tc.name {
			t.Errorf("%s: %+v %v", tc.name, p, ok)
		}
	}
	if _, ok := FrontendProfileOf("bash"); ok {
		t.Error("bash is an ACP profile, not a front end's")
	}
	if _, ok := FrontendProfileOf(""); ok {
		t.Error(`"" is a front end's profile`)
	}
}
