package planmode

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/askuser"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// TestSetOutcomes: each selection's outcome and what it leaves, as
// upstream's set and onBoundary decide them: the pending selection in
// force is a noop; a selection back to the mode in force cancels a
// pending one, during a turn or after it; a pending selection that
// matches the mode in force appends nothing at the next step; a commit
// clears the pending selection (the section and the next step follow the
// committed mode); a turn that ended lets a selection commit at once.
func TestSetOutcomes(t *testing.T) {
	type step struct {
		do    string // "on", "off", "open", "close", "boundary"
		out   string // Set's outcome
		modes string // the plan/mode events after it
	}
	for _, tc := range []struct {
		name  string
		steps []step
		// section is whether the plan:policy section is in the prompt
		// at the end
		section bool
	}{
		{"the pending selection again is a noop", []step{{do: "open"}, {"on", Queued, ""}, {"on", Noop, ""}}, true},
		{"back to the mode in force during a turn", []step{{do: "open"}, {"on", Queued, ""}, {"off", Cancelled, ""}, {do: "boundary"}}, false},
		{"back to the mode in force after the turn", []step{{do: "open"}, {"on", Queued, ""}, {do: "close"}, {"off", Cancelled, ""}, {do: "boundary"}}, false},
		{"a commit clears the pending selection", []step{{do: "open"}, {"on", Queued, ""}, {"off", Cancelled, ""}, {do: "close"}, {"on", Committed, `{"active":true}`}, {do: "boundary", modes: `{"active":true}`}}, true},
		{"a closed turn commits at once", []step{{do: "open"}, {do: "close"}, {"on", Committed, `{"active":true}`}}, true},
		{"a pending off hides the section at once", []step{{"on", Committed, `{"active":true}`}, {do: "open"}, {"off", Queued, `{"active":true}`}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := sessiontest.New(t, sid, "/ws")
			s := &Service{Section: "plan"}
			for i, st := range tc.steps {
				switch st.do {
				case "open":
					appendEv(t, log, session.KindTurnStart, map[string]int{"turn": 1})
				case "close":
					appendEv(t, log, session.KindTurnEnd, map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}})
				case "boundary":
					if _, err := s.OnBoundary(log); err != nil {
						t.Fatal(err)
					}
				default:
					out, _, err := s.Set(log, st.do == "on")
					if err != nil || out != st.out {
						t.Errorf("step %d: Set(%s) = %q, %v; want %q", i, st.do, out, err, st.out)
					}
				}
				if st.modes != "" || st.do == "boundary" {
					if m := modes(t, log); m != st.modes {
						t.Errorf("step %d (%s): plan/mode events %q, want %q", i, st.do, m, st.modes)
					}
				}
			}
			secs, err := s.Sections(log)
			if err != nil || (len(secs) == 1) != tc.section {
				t.Errorf("sections %+v, %v; want the section %v", secs, err, tc.section)
			}
		})
	}
}

// TestCommandTrimsOff: /plan off is read after trimming the input.
func TestCommandTrimsOff(t *testing.T) {
	log := sessiontest.New(t, sid, "/ws")
	s := &Service{}
	if _, _, err := s.Set(log, true); err != nil {
		t.Fatal(err)
	}
	got, err := s.Command(log, "  off \n")
	if err != nil || got.Text != "Plan mode off." || got.Message != "" {
		t.Errorf("/plan %q = %+v, %v", "  off \n", got, err)
	}
}

// TestExitRules: exit_plan_mode's refusals that TestExit leaves out: a
// caller without a session, a failed question, a review with two
// selections (not Approve alone), two answers of which one has feedback
// (not one review: no feedback is read), and a plan's heading read with
// JavaScript's whitespace (the plan trimmed as String.prototype.trim, the
// heading's space as \s).
func TestExitRules(t *testing.T) {
	answer := func(a ...askuser.Answer) askuser.Answerer {
		return func(context.Context, []askuser.Question) ([]askuser.Answer, error) { return a, nil }
	}
	approve := answer(askuser.Answer{ID: ReviewID, Selected: []string{ApproveLabel}})
	keep := "The user chose to keep planning; revise the plan and present it again."
	heading := "exit_plan_mode requires a non-empty markdown plan starting with a # heading"
	for _, tc := range []struct {
		name    string
		plan    string
		ask     askuser.Answerer
		noLog   bool
		want    string
		isError bool
	}{
		{"no session", "# P", approve, true, "exit_plan_mode requires a calling agent (no session to switch)", true},
		{"the question failed", "# P", func(context.Context, []askuser.Question) ([]askuser.Answer, error) {
			return nil, errors.New("the client went away")
		}, false, "the client went away", true},
		{"two selections", "# P", answer(askuser.Answer{ID: ReviewID, Selected: []string{ApproveLabel, KeepPlanningLabel}}), false, keep, true},
		{"two answers, one with feedback", "# P", answer(askuser.Answer{ID: ReviewID, Selected: []string{ApproveLabel}}, askuser.Answer{ID: ReviewID, Selected: []string{KeepPlanningLabel}, Custom: "no"}), false, keep, true},
		{"a no-break space after the #", "#\u00a0P", approve, false, Approved, false},
		{"a byte order mark before the #", "\ufeff# P", approve, false, Approved, false},
		{"U+0085 is not JavaScript whitespace", "\u0085# P", approve, false, heading, true},
		{"nor a heading's space", "#\u0085P", approve, false, heading, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := sessiontest.New(t, sid, "/ws")
			s := &Service{}
			if _, _, err := s.Set(log, true); err != nil {
				t.Fatal(err)
			}
			appendEv(t, log, session.KindTurnStart, map[string]int{"turn": 1})
			regs, err := New(Config{Plan: s, Ask: tc.ask})
			if err != nil {
				t.Fatal(err)
			}
			reg := pipelinetest.Registry(t, toolreg.Defs(regs...)...)
			args, _ := json.Marshal(map[string]string{"plan": tc.plan})
			agent := &pipeline.Agent{ID: "root", Session: log}
			if tc.noLog {
				agent.Session = nil
			}
			r := reg.Execute(pipeline.NewCall("c1", ExitName, args, agent, context.Background()))
			if text := blocksText(r.Content); r.IsError != tc.isError || !strings.Contains(text, tc.want) {
				t.Errorf("result %q (error %v), want %q (error %v)", text, r.IsError, tc.want, tc.isError)
			}
		})
	}
}

// TestNewCarriesTheSection: with a session log, the registration carries
// that session's plan:policy section; without one, none.
func TestNewCarriesTheSection(t *testing.T) {
	log := sessiontest.New(t, sid, "/ws")
	s := &Service{Section: "plan"}
	if _, _, err := s.Set(log, true); err != nil {
		t.Fatal(err)
	}
	regs, err := New(Config{Plan: s, Log: log})
	if err != nil || len(regs) != 1 || regs[0].SectionsFor == nil {
		t.Fatalf("New = %+v, %v", regs, err)
	}
	secs, err := regs[0].SectionsFor(nil)
	if err != nil || len(secs) != 1 || secs[0].Text != "plan" {
		t.Errorf("sections %+v, %v", secs, err)
	}
	if regs, _ := New(Config{Plan: s}); regs[0].SectionsFor != nil {
		t.Error("a registration without a log carries sections")
	}
}
