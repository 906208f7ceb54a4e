package goal

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

const sid = "11111111-2222-4333-8444-555555555555"

// fixture is a session with the goal tools, a fixed clock and goal id.
type fixture struct {
	t     *testing.T
	log   *session.Log
	agent *pipeline.Agent
	reg   *pipeline.Registry
	goals *Service
	n     int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, sessiontest.New(t, sid, "/ws"))
}

func newFixtureOn(t *testing.T, log *session.Log) *fixture {
	t.Helper()
	f := &fixture{t: t, log: log}
	f.agent = &pipeline.Agent{ID: "root", Session: f.log}
	clock := int64(1000)
	f.goals = &Service{Now: func() int64 { clock++; return clock }, NewID: func() string { return "goal-g1" }}
	regs, err := New(Config{Goals: f.goals})
	if err != nil {
		t.Fatal(err)
	}
	f.reg = pipelinetest.Registry(t, toolreg.Defs(regs...)...)
	return f
}

// append logs one event.
func (f *fixture) append(typ string, data any) {
	f.t.Helper()
	if _, err := f.log.Append(typ, data); err != nil {
		f.t.Fatal(err)
	}
}

// humanTurn opens a turn with a user's prompt; roundTurn one with goal
// round n of goal-g1 at revision rev.
func (f *fixture) humanTurn() {
	f.append(session.KindTurnStart, map[string]int{"turn": 1})
	f.append(session.KindUserMessage, map[string]any{"content": []any{}, "source": map[string]string{"kind": "user"}})
}

func (f *fixture) roundTurn(n, rev int64) {
	f.append(session.KindTurnEnd, map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}})
	f.append(session.KindTurnStart, map[string]int{"turn": 2})
	f.append(session.KindUserMessage, map[string]any{"content": []any{}, "source": RoundSource{Kind: SourceKind, GoalID: "goal-g1", Revision: rev, Round: n}})
}

func (f *fixture) call(name, args string) pipeline.Result {
	f.n++
	return f.reg.Execute(pipeline.NewCall("c"+string(rune('0'+f.n)), name, json.RawMessage(args), f.agent, context.Background()))
}

func (f *fixture) changes() []string {
	evs, err := f.log.Events()
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Type == session.KindGoalChange {
			out = append(out, string(e.Data))
		}
	}
	return out
}

const created = `{"goal":{"id":"goal-g1","revision":1,"objective":"ship it","phase":"active","roundsStarted":0,"maxGoalRounds":7},"activation":"armed"}`

// TestGoalTools: each tool's outcome, as upstream's tool-goal and goal
// domain give it (texts, codes, the value's JSON).
func TestGoalTools(t *testing.T) {
	type step struct {
		tool, args string
		want       string // the result's text
		code       string // the error's code ("" for a success)
	}
	create := step{CreateName, `{"objective":" ship it ","max_goal_rounds":7}`, created, ""}
	for _, tc := range []struct {
		name  string
		setup func(*fixture)
		steps []step
	}{
		{"no goal yet", (*fixture).humanTurn, []step{
			{GetName, `{}`, `{"goal":null}`, ""},
			{UpdateName, `{"goal_id":"missing-goal","revision":1,"action":"pause","objective":"","max_goal_rounds":0,"blocked_reason":""}`, "Error: no current goal", "GOAL_NOT_FOUND"},
		}},
		{"create, read, stale ref", (*fixture).humanTurn, []step{create,
			{GetName, `{}`, created, ""},
			{UpdateName, `{"goal_id":"goal-g1","revision":2,"action":"pause"}`, `Error: stale goal ref "goal-g1" revision 2; current is "goal-g1" revision 1`, "GOAL_STALE_REVISION"},
			{CreateName, `{"objective":"again"}`, `Error: goal "goal-g1" already exists with phase "active"`, "GOAL_ALREADY_EXISTS"},
		}},
		{"default round cap", (*fixture).humanTurn, []step{
			{CreateName, `{"objective":"x"}`, `{"goal":{"id":"goal-g1","revision":1,"objective":"x","phase":"active","roundsStarted":0,"maxGoalRounds":256},"activation":"armed"}`, ""},
		}},
		{"a zero cap is refused at create", (*fixture).humanTurn, []step{
			{CreateName, `{"objective":"x","max_goal_rounds":0}`, "Error: maxGoalRounds must be a positive safe integer", "GOAL_INVALID_MAX_ROUNDS"},
			{CreateName, `{"objective":"x","max_goal_rounds":1.5}`, "Error: maxGoalRounds must be a positive safe integer", "GOAL_INVALID_MAX_ROUNDS"},
			{CreateName, `{"objective":" \t"}`, "Error: goal objective must be a non-empty string", "GOAL_INVALID_OBJECTIVE"},
		}},
		{"pause then resume rearms", (*fixture).humanTurn, []step{create,
			{UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"pause","objective":"","max_goal_rounds":0}`, `{"goal":{"id":"goal-g1","revision":2,"objective":"ship it","phase":"paused","roundsStarted":0,"maxGoalRounds":7},"activation":"disarmed"}`, ""},
			{UpdateName, `{"goal_id":"goal-g1","revision":2,"action":"pause"}`, `Error: cannot pause goal "goal-g1" from phase "paused"; expected active`, "GOAL_INVALID_TRANSITION"},
			{UpdateName, `{"goal_id":"goal-g1","revision":2,"action":"resume"}`, `{"goal":{"id":"goal-g1","revision":3,"objective":"ship it","phase":"active","roundsStarted":0,"maxGoalRounds":7},"activation":"armed"}`, ""},
			{UpdateName, `{"goal_id":"goal-g1","revision":3,"action":"resume"}`, `Error: goal "goal-g1" is already active and armed`, "GOAL_INVALID_TRANSITION"},
		}},
		{"fillers with pause are refused when meaningful", (*fixture).humanTurn, []step{create,
			{UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"pause","objective":"new"}`, "Error: objective and max_goal_rounds are valid only with action edit; blocked_reason is valid only with action blocked", "GOAL_TOOL_INVALID_UPDATE"},
			{UpdateName, `{"goal_id":" goal-g1","revision":1,"action":"pause"}`, "Error: goal_id must be non-empty and revision must be a positive safe integer", "GOAL_TOOL_INVALID_UPDATE"},
			{UpdateName, `{"goal_id":"goal-g1","revision":0,"action":"pause"}`, "Error: goal_id must be non-empty and revision must be a positive safe integer", "GOAL_TOOL_INVALID_UPDATE"},
		}},
		{"edit", (*fixture).humanTurn, []step{create,
			{UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"edit","objective":"","max_goal_rounds":0}`, "Error: goal edit requires objective and/or maxGoalRounds", "GOAL_INVALID_EDIT"},
			{UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"edit","max_goal_rounds":3}`, `{"goal":{"id":"goal-g1","revision":2,"objective":"ship it","phase":"active","roundsStarted":0,"maxGoalRounds":3},"activation":"armed"}`, ""},
		}},
		{"no open turn", func(*fixture) {}, []step{
			{GetName, `{}`, "Error: goal tools require an open model turn", "GOAL_TOOL_DRIVER_REQUIRED"},
		}},
		{"a closed turn is not open", func(f *fixture) {
			f.humanTurn()
			f.append(session.KindTurnEnd, map[string]any{"turn": 1})
		}, []step{
			{GetName, `{}`, "Error: goal tools require an open model turn", "GOAL_TOOL_DRIVER_REQUIRED"},
		}},
		{"create needs a human in this turn", func(f *fixture) {
			f.append(session.KindTurnStart, map[string]int{"turn": 1})
		}, []step{
			{CreateName, `{"objective":"x"}`, "Error: this goal operation requires a direct human turn on a top-level agent", "GOAL_TOOL_AUTHORITY_REQUIRED"},
			{UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"complete"}`, "Error: complete and blocked require a direct human turn or the current goal round", "GOAL_TOOL_AUTHORITY_REQUIRED"},
		}},
		{"human completes without a wrap-up", (*fixture).humanTurn, []step{create,
			{UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"complete","blocked_reason":"x"}`, "Error: blocked_reason is valid only with action blocked", "GOAL_TOOL_INVALID_UPDATE"},
			{UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"blocked","blocked_reason":"  "}`, "Error: blocked_reason is required with action blocked", "GOAL_TOOL_INVALID_UPDATE"},
			{UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"blocked","blocked_reason":" disk full "}`, `{"goal":{"id":"goal-g1","revision":2,"objective":"ship it","phase":"blocked","roundsStarted":0,"maxGoalRounds":7,"blockedReason":{"code":"model-reported","message":"disk full"}},"activation":"disarmed"}`, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(f)
			for i, s := range tc.steps {
				r := f.call(s.tool, s.args)
				if r.Text() != s.want {
					t.Fatalf("step %d %s %s: text %q\nwant %q", i, s.tool, s.args, r.Text(), s.want)
				}
				code := ""
				if r.Error != nil && r.Error.Info != nil {
					code = r.Error.Info.Code
				}
				if code != s.code || r.IsError != (s.code != "") || len(r.ContextMessages) != 0 {
					t.Fatalf("step %d: code %q (isError %v, contexts %v), want %q", i, code, r.IsError, r.ContextMessages, s.code)
				}
			}
		})
	}
}

// TestErrorNames: the domain's refusals are GoalError, the tools' own
// HarnessError.
func TestErrorNames(t *testing.T) {
	f := newFixture(t)
	f.humanTurn()
	if r := f.call(UpdateName, `{"goal_id":"g","revision":1,"action":"pause"}`); r.Error == nil || r.Error.Info == nil || r.Error.Info.Name != ErrorName {
		t.Fatalf("domain refusal %+v", r.Error)
	}
	if r := f.call(UpdateName, `{"goal_id":"","revision":1,"action":"pause"}`); r.Error == nil || r.Error.Info == nil || r.Error.Info.Name != ToolErrorName {
		t.Fatalf("tool refusal %+v", r.Error)
	}
}

// TestChangeEvent: create logs one goal/change, upstream's shape, its
// times the clock's; a refused call logs nothing.
func TestChangeEvent(t *testing.T) {
	f := newFixture(t)
	f.humanTurn()
	f.call(UpdateName, `{"goal_id":"missing","revision":1,"action":"pause"}`)
	f.call(CreateName, `{"objective":"ship it","max_goal_rounds":7}`)
	f.call(UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"pause"}`)
	want := []string{
		`{"kind":"goal/change","version":1,"operation":"create","goal":{"id":"goal-g1","revision":1,"objective":"ship it","phase":"active","maxGoalRounds":7},"roundsStarted":0,"createdAt":1001,"updatedAt":1001}`,
		`{"kind":"goal/change","version":1,"operation":"pause","goal":{"id":"goal-g1","revision":2,"objective":"ship it","phase":"paused","maxGoalRounds":7},"roundsStarted":0,"createdAt":1001,"updatedAt":1002}`,
	}
	if got := f.changes(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestActivation: the activation is the committing service's; a fresh
// service (a resumed session) reads the goal disarmed, and a goal/change
// it did not commit disarms it.
func TestActivation(t *testing.T) {
	f := newFixture(t)
	f.humanTurn()
	f.call(CreateName, `{"objective":"ship it","max_goal_rounds":7}`)
	if v, err := f.goals.Get(f.log); err != nil || v.Activation != Armed {
		t.Fatalf("after create: %+v %v", v, err)
	}
	fresh := &Service{}
	if v, err := fresh.Get(f.log); err != nil || v.Activation != Disarmed || v.Revision != 1 {
		t.Fatalf("fresh service: %+v %v", v, err)
	}
	if _, err := fresh.Pause(f.log, Ref{ID: "goal-g1", Revision: 1}); err != nil {
		t.Fatal(err)
	}
	if v, err := f.goals.Get(f.log); err != nil || v.Activation != Disarmed || v.Phase != PhasePaused {
		t.Fatalf("after a foreign change: %+v %v", v, err)
	}
}

// TestGoalRoundAuthority: in the goal's exact round, complete is allowed
// without a human and its closing instruction joins the next step;
// blocked needs the threshold's rounds (3: the third round may, the
// second may not).
func TestGoalRoundAuthority(t *testing.T) {
	f := newFixture(t)
	f.humanTurn()
	f.call(CreateName, `{"objective":"ship it","max_goal_rounds":7}`)
	f.roundTurn(1, 1)
	r := f.call(UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"complete"}`)
	if r.IsError || len(r.ContextMessages) != 1 {
		t.Fatalf("complete in round: %+v", r)
	}
	m := r.ContextMessages[0]
	want := "<goal_complete>\nObjective: \"ship it\"\nThe goal is marked complete and this autonomous run is ending."
	if m.Plugin != WrapupPlugin || m.Form != "notice" || m.Summary != "complete: ship it" || len(m.Texts) != 1 || !strings.HasPrefix(m.Texts[0], want) {
		t.Fatalf("wrap-up %+v", m)
	}
	for _, tc := range []struct {
		rounds int64
		want   string
	}{
		{2, "Error: blocked requires at least 3 consecutive goal rounds; current round is 2"},
		{3, "<goal_blocked>"},
	} {
		g := newFixture(t)
		g.humanTurn()
		g.call(CreateName, `{"objective":"ship it","max_goal_rounds":7}`)
		for n := int64(1); n <= tc.rounds; n++ {
			g.roundTurn(n, 1)
		}
		r := g.call(UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"blocked","blocked_reason":"disk full"}`)
		got := r.Text()
		if len(r.ContextMessages) == 1 {
			got = r.ContextMessages[0].Texts[0]
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Fatalf("blocked after %d rounds: %q, want %q", tc.rounds, got, tc.want)
		}
	}
	// A round of another revision gives no authority.
	h := newFixture(t)
	h.humanTurn()
	h.call(CreateName, `{"objective":"ship it"}`)
	h.roundTurn(1, 1)
	h.call(GetName, `{}`)
	if _, err := h.goals.Edit(h.log, Ref{ID: "goal-g1", Revision: 1}, nil, ptr(5.0)); err != nil {
		t.Fatal(err)
	}
	if r := h.call(UpdateName, `{"goal_id":"goal-g1","revision":2,"action":"complete"}`); !r.IsError {
		t.Fatalf("complete under a stale round: %+v", r)
	}
}

// TestChildHasNoHumanAuthority: a child session's user message is not a
// direct human turn.
func TestChildHasNoHumanAuthority(t *testing.T) {
	log, err := session.Create(filepath.Join(t.TempDir(), "child.jsonl"), session.Header{Type: "session", ID: sid, Cwd: "/ws", ParentSession: "99999999-2222-4333-8444-555555555555", Origin: "subagent", DelegationDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	f := newFixtureOn(t, log)
	f.humanTurn()
	if r := f.call(CreateName, `{"objective":"x"}`); !r.IsError || r.Error.Info.Code != "GOAL_TOOL_AUTHORITY_REQUIRED" {
		t.Fatalf("child create: %+v", r)
	}
}

func ptr[T any](v T) *T { return &v }

// TestFoldRefusesBadChanges: the strict fold refuses a malformed change
// or an illegal transition, naming the event's seq and the field.
func TestFoldRefusesBadChanges(t *testing.T) {
	good := `{"kind":"goal/change","version":1,"operation":"create","goal":{"id":"g","revision":1,"objective":"o","phase":"active","maxGoalRounds":2},"roundsStarted":0,"createdAt":1,"updatedAt":1}`
	for _, tc := range []struct{ name, data, want string }{
		{"good", good, ""},
		{"version", strings.Replace(good, `"version":1`, `"version":2`, 1), "unsupported goal change version 2"},
		{"operation", strings.Replace(good, `"create"`, `"frob"`, 1), "goal change operation is invalid"},
		{"extra field", strings.Replace(good, `"version":1`, `"version":1,"x":1`, 1), "must have exactly createdAt,goal,kind,operation,roundsStarted,updatedAt,version fields"},
		{"times", strings.Replace(good, `"updatedAt":1`, `"updatedAt":0`, 1), "updatedAt cannot precede createdAt"},
		{"objective", strings.Replace(good, `"o"`, `" o"`, 1), "goal.objective must be non-empty and normalized"},
		{"phase", strings.Replace(good, `"active"`, `"done"`, 1), "goal.phase is invalid"},
		{"revision two at create", strings.Replace(good, `"revision":1`, `"revision":2`, 1), "goal create requires a fresh active revision-one goal"},
		{"rounds", strings.Replace(good, `"maxGoalRounds":2`, `"maxGoalRounds":0`, 1), "goal.maxGoalRounds must be a positive safe integer"},
		{"not a record", `[1]`, "goal change must be a record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fold([]session.Event{{Type: session.KindGoalChange, Seq: 7, Data: json.RawMessage(tc.data)}})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "session event 7") {
				t.Fatalf("error %v, want one naming event 7 and %q", err, tc.want)
			}
		})
	}
	// A round beyond the next is refused.
	evs := []session.Event{{Type: session.KindGoalChange, Seq: 1, Data: json.RawMessage(good)},
		{Type: session.KindUserMessage, Seq: 2, Data: json.RawMessage(`{"source":{"kind":"goal","goalId":"g","revision":1,"round":2}}`)}}
	if _, err := Fold(evs); err == nil || !strings.Contains(err.Error(), "session event 2 is not the next admitted round") {
		t.Fatalf("skipped round: %v", err)
	}
	evs[1].Data = json.RawMessage(`{"source":{"kind":"goal","goalId":"g","revision":1,"round":1}}`)
	if s, err := Fold(evs); err != nil || s.RoundsStarted != 1 {
		t.Fatalf("next round: %+v %v", s, err)
	}
}

// TestSection: the tool:goal section, with the threshold.
func TestSection(t *testing.T) {
	regs, err := New(Config{Goals: &Service{}, BlockedAfterConsecutiveRounds: 5})
	if err != nil || len(regs) != 3 {
		t.Fatal(regs, err)
	}
	if regs[1].Section != nil || regs[2].Section != nil {
		t.Fatal("the section is registered more than once")
	}
	s := regs[0].Section
	if s.Name != "tool:goal" || s.Order != 114 || !strings.Contains(s.Text, "persists for at least 5 consecutive goal rounds") {
		t.Fatalf("section %+v", s)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("no service accepted")
	}
}

// TestNextRound: an active armed goal starts its next round (upstream's
// instruction); a disarmed, paused or missing goal none; one whose rounds
// are spent is blocked (round-limit) and starts none. The round's message
// counts the round: the cap is the last round that starts.
func TestNextRound(t *testing.T) {
	f := newFixture(t)
	if r, err := f.goals.NextRound(f.log); r != nil || err != nil {
		t.Fatalf("no goal: %+v %v", r, err)
	}
	f.humanTurn()
	f.call(CreateName, `{"objective":"ship \"it\"","max_goal_rounds":2}`)
	for n := int64(1); n <= 2; n++ {
		r, err := f.goals.NextRound(f.log)
		if err != nil || r == nil {
			t.Fatalf("round %d: %+v %v", n, r, err)
		}
		want := RoundSource{Kind: SourceKind, GoalID: "goal-g1", Revision: 1, Round: n}
		head := fmt.Sprintf("<goal_round>\nObjective: \"ship \\\"it\\\"\"\nRound: %d/2\n\nContinue working toward the objective in this same session.", n)
		if r.Source != want || !strings.HasPrefix(r.Text, head) || !strings.HasSuffix(r.Text, "before reporting a blocker.\n</goal_round>") {
			t.Fatalf("round %d: %+v", n, r)
		}
		f.roundTurn(n, 1)
	}
	r, err := f.goals.NextRound(f.log)
	if err != nil || r != nil {
		t.Fatalf("after the cap: %+v %v", r, err)
	}
	v, err := f.goals.Get(f.log)
	if err != nil || v.Phase != PhaseBlocked || *v.BlockedReason != (BlockReason{Code: "round-limit", Message: "Goal reached its configured limit of 2 rounds."}) {
		t.Fatalf("after the cap: %+v %v", v, err)
	}
	g := newFixture(t)
	g.humanTurn()
	g.call(CreateName, `{"objective":"x"}`)
	if err := g.goals.Disarm(g.log); err != nil {
		t.Fatal(err)
	}
	if r, err := g.goals.NextRound(g.log); r != nil || err != nil {
		t.Fatalf("disarmed: %+v %v", r, err)
	}
	g.call(UpdateName, `{"goal_id":"goal-g1","revision":1,"action":"resume"}`)
	g.call(UpdateName, `{"goal_id":"goal-g1","revision":2,"action":"pause"}`)
	if r, err := g.goals.NextRound(g.log); r != nil || err != nil {
		t.Fatalf("paused: %+v %v", r, err)
	}
}
