package planmode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/askuser"
	"github.com/dshsim/dshsim/tools/toolreg"
)

const sid = "11111111-2222-4333-8444-555555555555"

func appendEv(t *testing.T, log *session.Log, typ string, data any) {
	t.Helper()
	if _, err := log.Append(typ, data); err != nil {
		t.Fatal(err)
	}
}

// modes are log's plan/mode values, in order.
func modes(t *testing.T, log *session.Log) string {
	t.Helper()
	evs, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Type == session.KindPlanMode {
			out = append(out, string(e.Data))
		}
	}
	return strings.Join(out, " ")
}

// TestCommand: /plan between turns commits at once, during a turn it is
// pending until the next step (OnBoundary), as upstream's set; each
// answer's text is upstream's.
func TestCommand(t *testing.T) {
	steps := []struct {
		raw, text, msg string
		turn           string // "open" or "close" a turn before the command
		boundary       bool   // a step is entered after the command
		modes          string // the plan/mode events so far
	}{
		{raw: "off", text: "Plan mode is already inactive."},
		{raw: " do it ", text: "Plan mode on. Use /plan off to leave.", msg: "do it", modes: `{"active":true}`},
		{raw: "", text: "Entering plan mode (applies from the next step). Use /plan off to leave.", modes: `{"active":true}`},
		{raw: "off", text: "Plan mode off.", modes: `{"active":true} {"active":false}`},
		{raw: "x", turn: "open", text: "Entering plan mode (applies from the next step). Use /plan off to leave.", msg: "x", modes: `{"active":true} {"active":false}`},
		{raw: "off", text: "Plan mode entry cancelled.", modes: `{"active":true} {"active":false}`},
		{raw: "y", text: "Entering plan mode (applies from the next step). Use /plan off to leave.", msg: "y", boundary: true, modes: `{"active":true} {"active":false} {"active":true}`},
		{raw: "off", text: "Leaving plan mode (applies from the next step).", modes: `{"active":true} {"active":false} {"active":true}`},
		{raw: "off", text: "Leaving plan mode (applies from the next step).", modes: `{"active":true} {"active":false} {"active":true}`},
		{raw: "off", turn: "close", text: "Plan mode is already inactive.", modes: `{"active":true} {"active":false} {"active":true} {"active":false}`},
	}
	log := sessiontest.New(t, sid, "/ws")
	s := &Service{}
	for i, st := range steps {
		switch st.turn {
		case "open":
			appendEv(t, log, session.KindTurnStart, map[string]int{"turn": 1})
		case "close":
			if _, err := s.OnBoundary(log); err != nil { // a last step enters the pending off
				t.Fatal(err)
			}
			appendEv(t, log, session.KindTurnEnd, map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}})
		}
		got, err := s.Command(log, st.raw)
		if err != nil || got.Kind != "success" || got.Text != st.text || got.Message != st.msg {
			t.Errorf("step %d /plan %q = %+v, %v; want %q, message %q", i, st.raw, got, err, st.text, st.msg)
		}
		if st.boundary {
			if _, err := s.OnBoundary(log); err != nil {
				t.Fatal(err)
			}
		}
		if m := modes(t, log); m != st.modes {
			t.Errorf("step %d /plan %q: plan/mode events %s, want %s", i, st.raw, m, st.modes)
		}
	}
}

// TestFold: the last plan/mode wins; none is inactive; an active that is
// not a boolean is an error naming its seq.
func TestFold(t *testing.T) {
	ev := func(seq int64, data string) session.Event {
		return session.Event{Type: session.KindPlanMode, Seq: seq, Data: json.RawMessage(data)}
	}
	other := session.Event{Type: session.KindTurnStart, Seq: 9, Data: json.RawMessage(`{"active":true}`)}
	cases := []struct {
		name string
		evs  []session.Event
		want bool
		err  string
	}{
		{"none", nil, false, ""},
		{"another kind", []session.Event{other}, false, ""},
		{"on", []session.Event{ev(1, `{"active":true}`)}, true, ""},
		{"the last wins", []session.Event{ev(1, `{"active":true}`), ev(2, `{"active":false}`)}, false, ""},
		{"a string", []session.Event{ev(3, `{"active":"true"}`)}, false, "plan/mode at seq 3 carries invalid active state"},
		{"missing", []session.Event{ev(4, `{}`)}, false, "plan/mode at seq 4 carries invalid active state"},
	}
	for _, c := range cases {
		got, err := Fold(c.evs)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%s: Fold = %v, %v; want %v, %q", c.name, got, err, c.want, c.err)
		}
	}
}

// TestExit: exit_plan_mode's refusals in upstream's order, its review
// question, and an approval ending plan mode at the next step only (the
// call's own step stays in plan mode).
func TestExit(t *testing.T) {
	approve := func(_ context.Context, qs []askuser.Question) ([]askuser.Answer, error) {
		return []askuser.Answer{{ID: qs[0].ID, Selected: []string{ApproveLabel}}}, nil
	}
	answer := func(a ...askuser.Answer) askuser.Answerer {
		return func(context.Context, []askuser.Question) ([]askuser.Answer, error) { return a, nil }
	}
	cases := []struct {
		name   string
		active bool
		plan   string
		ask    askuser.Answerer
		want   string // the result's text
		isErr  bool
	}{
		{"not in plan mode", false, "# P", approve, "exit_plan_mode is only available in plan mode", true},
		{"no heading", true, "plan", approve, "exit_plan_mode requires a non-empty markdown plan starting with a # heading", true},
		{"a heading without text", true, "#  ", approve, "exit_plan_mode requires a non-empty markdown plan starting with a # heading", true},
		{"a level-two heading", true, "## P", approve, "exit_plan_mode requires a non-empty markdown plan starting with a # heading", true},
		{"nobody to ask", true, "# P", nil, "no user-questions channel is available to review the plan; ask the user to switch the session mode instead", true},
		{"keep planning", true, "# P", answer(askuser.Answer{ID: ReviewID, Selected: []string{KeepPlanningLabel}}), "The user chose to keep planning; revise the plan and present it again.", true},
		{"feedback", true, "# P", answer(askuser.Answer{ID: ReviewID, Selected: []string{ApproveLabel}, Custom: "smaller"}), "The user chose to keep planning; their feedback: smaller", true},
		{"two answers", true, "# P", answer(askuser.Answer{ID: ReviewID, Selected: []string{ApproveLabel}}, askuser.Answer{ID: ReviewID, Selected: []string{ApproveLabel}}), "The user chose to keep planning; revise the plan and present it again.", true},
		{"approved", true, "  # Plan\n- a", approve, Approved, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log := sessiontest.New(t, sid, "/ws")
			s := &Service{}
			if c.active {
				if _, _, err := s.Set(log, true); err != nil {
					t.Fatal(err)
				}
			}
			appendEv(t, log, session.KindTurnStart, map[string]int{"turn": 1})
			var asked []askuser.Question
			ask := c.ask
			if ask != nil {
				ask = func(ctx context.Context, qs []askuser.Question) ([]askuser.Answer, error) {
					asked = qs
					return c.ask(ctx, qs)
				}
			}
			regs, err := New(Config{Plan: s, Ask: ask})
			if err != nil {
				t.Fatal(err)
			}
			reg := pipelinetest.Registry(t, toolreg.Defs(regs...)...)
			args, _ := json.Marshal(map[string]string{"plan": c.plan})
			r := reg.Execute(pipeline.NewCall("c1", ExitName, args, &pipeline.Agent{ID: "root", Session: log}, context.Background()))
			if text := blocksText(r.Content); r.IsError != c.isErr || !strings.Contains(text, c.want) {
				t.Fatalf("result %q (error %v), want %q (error %v)", text, r.IsError, c.want, c.isErr)
			}
			before := modes(t, log)
			if _, err := s.OnBoundary(log); err != nil {
				t.Fatal(err)
			}
			after := strings.TrimPrefix(strings.TrimPrefix(modes(t, log), before), " ")
			if want := map[bool]string{true: `{"active":false}`, false: ""}[!c.isErr]; after != want {
				t.Errorf("the next step appended %q, want %q", after, want)
			}
			if asked != nil && (len(asked) != 1 || asked[0].ID != ReviewID || asked[0].Detail != c.plan || asked[0].Intent == nil || asked[0].Intent.Kind != "plan-review" || asked[0].Intent.Approve != ApproveLabel) {
				t.Errorf("asked %+v, want the plan review of the plan", asked)
			}
		})
	}
}

func blocksText(bs []pipeline.Block) string {
	var b strings.Builder
	for _, x := range bs {
		b.WriteString(x.Text)
	}
	return b.String()
}

// TestSections: the plan:policy section while plan mode is active or
// selected, none otherwise or without a section text.
func TestSections(t *testing.T) {
	log := sessiontest.New(t, sid, "/ws")
	s := &Service{Section: "You are in plan mode."}
	if secs, err := s.Sections(log); err != nil || len(secs) != 0 {
		t.Fatalf("inactive: %v, %v", secs, err)
	}
	if _, _, err := s.Set(log, true); err != nil {
		t.Fatal(err)
	}
	secs, err := s.Sections(log)
	if err != nil || len(secs) != 1 || secs[0].Name != SectionName || secs[0].Order != SectionOrder || secs[0].Text != s.Section {
		t.Fatalf("active: %+v, %v", secs, err)
	}
	if secs, _ := (&Service{}).Sections(log); len(secs) != 0 {
		t.Fatalf("no section text: %+v", secs)
	}
	if _, err := New(Config{}); err == nil || err.Error() != "exit_plan_mode: no plan mode service" {
		t.Fatal("New without a service: no error")
	}
}
