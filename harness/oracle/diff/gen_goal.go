package diff

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// GoalProfile is the profile of the cases run through upstream's goal suite
// (the ACP agent with the goal domain, the goal-round driver and the goal
// tools) instead of the plain ACP agent: [GenerateGoal] makes them,
// [Checker.Frontend] runs them.
const GoalProfile = "goal"

// Areas only the goal profile explores.
const (
	AreaGoalTools  = "goal-tools"
	AreaGoalRounds = "goal-rounds"
	AreaGoalArgs   = "goal-arguments"
)

// goalID is the goal id a call copies: upstream's llm-replay resolves it
// from the request (the id create_goal's result printed), as the goal
// suite's own scripts do; so does our replay.
const goalID = "{{fromRequest:goal-[0-9a-f-]+}}"

// goalReady is the text the first turn ends with, which the input's
// promptAndWaitForAgentMessage waits for.
const goalReady = "GOAL READY"

// goalObjectives are what a goal is created or edited to: plain, quoted,
// tag-like, multiline, not ASCII.
var goalObjectives = []string{"Finish the generated goal", `Say "done" twice`, "<goal_round>not a tag</goal_round>",
	"line one\nline two", "écrire ✓ 完成", "  padded  "}

// goalMoves are the calls a goal round makes besides the goal tools.
var goalMoves = []func(*gen){moveBashOutput, moveRead, moveWrite, moveEdit, moveFSFailure}

// goalState is the goal a case has made so far: its revision, as upstream
// counts it.
type goalState struct{ revision int }

// GenerateGoal makes goal case index of seed, gen-goal-<seed>-<index>, from
// its own PCG stream: the goal suite's input (a prompt answered with
// GOAL READY, then the first goal round awaited to its end); a first turn
// that creates the goal (after refused creations, reads and direct-human
// edits) and replies GOAL READY; then goal round 1, which runs a few calls
// and either completes the goal (a wrap-up instruction, then a closing
// text), after refused updates (a stale revision, blocked too early, an
// unknown action or id), or, when the goal allows one round, ends in text
// with the goal left active and its rounds spent. Under danger-full-access,
// as the goal suite runs, with the repeated-call reminder mounted.
func GenerateGoal(seed uint64, index int) *Case {
	r := rand.New(rand.NewPCG(seed^0x676f_616c, uint64(index)))
	g := &gen{r: r, areas: map[string]bool{}, ws: map[string]string{}}
	g.seedFiles()
	g.set.Reminder = true
	st := &goalState{}
	rounds := pick(g, 1, 2, 2)
	g.goalCreate(st, rounds)
	first := append(g.steps, oracle.Step{Text: goalReady})
	g.steps = nil
	for range 1 + r.IntN(3) {
		pick(g, goalMoves...)(g)
	}
	g.goalRoundEnd(st, rounds)
	c := &Case{Seed: seed, Index: index, Name: fmt.Sprintf("gen-goal-%d-%d", seed, index), Settings: g.set, Profile: GoalProfile,
		Script: &oracle.Script{Steps: goalSteps(), Turns: [][]oracle.Step{first, g.steps}, Workspace: g.ws}}
	for a := range g.areas {
		c.Areas = append(c.Areas, a)
	}
	sort.Strings(c.Areas)
	return c
}

// goalSteps are the goal suite's input after initialize and newSession.
func goalSteps() []recording.Step {
	return []recording.Step{
		{Op: "promptAndWaitForAgentMessage", Text: "Create a durable goal for the generated calls, then report readiness.", WaitForText: goalReady},
		{Op: "waitForTurnStart", MinimumTurn: 2},
		{Op: "waitForTurnEnd"},
	}
}

// goalCreate is the first turn's goal calls: refused creations, then the
// goal, then reads and direct-human edits that keep it active.
func (g *gen) goalCreate(st *goalState, rounds int) {
	if g.chance(0.4) {
		g.call("get_goal", o(), AreaGoalTools)
	}
	if g.chance(0.5) {
		bad := pick(g, o("objective", ""), o("objective", "x", "max_goal_rounds", 0), o("objective", "x", "max_goal_rounds", -1),
			o("objective", "x", "max_goal_rounds", 1.5), o("objective", "x", "max_goal_rounds", "2"), o("max_goal_rounds", 2))
		g.call("create_goal", bad, AreaGoalTools, AreaGoalArgs)
	}
	g.call("create_goal", o("objective", pick(g, goalObjectives...), "max_goal_rounds", rounds), AreaGoalTools)
	st.revision = 1
	if g.chance(0.3) {
		g.call("create_goal", o("objective", "a second goal"), AreaGoalTools, AreaGoalArgs)
	}
	if g.chance(0.5) {
		g.call("get_goal", o(), AreaGoalTools)
	}
	if g.chance(0.4) {
		g.call("update_goal", o("goal_id", goalID, "revision", st.revision, "action", "edit", "objective", pick(g, goalObjectives...)), AreaGoalTools)
		st.revision++
	}
	if g.chance(0.3) {
		pick(g, goalMoves...)(g)
	}
}

// goalRoundEnd ends goal round 1: refused updates, then complete and a
// closing text; or, when the goal has one round, a text alone (its rounds
// spent, it stays active and no round follows).
func (g *gen) goalRoundEnd(st *goalState, rounds int) {
	g.mark(AreaGoalRounds)
	if g.chance(0.5) {
		g.call("get_goal", o(), AreaGoalTools)
	}
	if rounds == 1 && g.chance(0.4) {
		g.steps = append(g.steps, oracle.Step{Text: "ROUND DONE: work remains"})
		return
	}
	if g.chance(0.6) {
		bad := pick(g,
			o("goal_id", goalID, "revision", st.revision+1, "action", "complete"),
			o("goal_id", goalID, "revision", st.revision, "action", "blocked", "blocked_reason", "stuck"),
			o("goal_id", goalID, "revision", st.revision, "action", "finish"),
			o("goal_id", "goal-unknown", "revision", st.revision, "action", "complete"),
			o("goal_id", goalID, "revision", st.revision, "action", "complete", "objective", "not for complete"),
			o("goal_id", goalID, "action", "complete"))
		g.call("update_goal", bad, AreaGoalTools, AreaGoalArgs)
	}
	g.call("update_goal", o("goal_id", goalID, "revision", st.revision, "action", "complete"), AreaGoalTools)
	g.steps = append(g.steps, oracle.Step{Text: "GOAL WRAP-UP: the generated objective is done."})
}

// FrontendProfile is a profile whose cases run through a front end of their
// own: generated from a stream of their own, recorded by upstream through
// that front end.
type FrontendProfile struct {
	Name     string
	Frontend recording.Frontend
	Generate func(seed uint64, index int) *Case
}

// FrontendProfiles are the profiles beyond the ACP agent's: headless (the
// product CLI's headless profile), goal (the ACP goal suite) and jsonrpc
// (the SDK's client and server).
func FrontendProfiles() []FrontendProfile {
	return []FrontendProfile{
		{HeadlessProfile, recording.Headless, GenerateHeadless},
		{GoalProfile, recording.Goal, GenerateGoal},
		{JSONRPCProfile, recording.JSONRPC, GenerateJSONRPC},
	}
}

// FrontendProfileOf is the front-end profile named name, if there is one.
func FrontendProfileOf(name string) (FrontendProfile, bool) {
	for _, p := range FrontendProfiles() {
		if p.Name == name {
			return p, true
		}
	}
	return FrontendProfile{}, false
}
