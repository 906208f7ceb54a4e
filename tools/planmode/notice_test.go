package planmode

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/askuser"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// TestNotice: the user-switch notice is told against the mode in force at
// the last request/header (the fold up to and including it): none before
// any request, none when the target is that mode (whatever was logged
// after it), else the target's text, as a plan-mode notice whose summary
// is its text.
func TestNotice(t *testing.T) {
	hdr := session.Event{Type: session.KindRequestHeader, Data: json.RawMessage(`{}`)}
	mode := func(a bool) session.Event {
		d, _ := json.Marshal(map[string]bool{"active": a})
		return session.Event{Type: session.KindPlanMode, Data: d}
	}
	for _, tc := range []struct {
		name   string
		events []session.Event
		target bool
		want   string // "": no notice
	}{
		{"no request yet: on", nil, true, ""},
		{"no request yet, a mode logged: off", []session.Event{mode(true)}, false, ""},
		{"told default, switched on", []session.Event{hdr}, true, NoticeOn},
		{"told default, off again", []session.Event{hdr}, false, ""},
		{"told plan, switched off", []session.Event{mode(true), hdr}, false, NoticeOff},
		{"told plan, on again", []session.Event{mode(true), hdr}, true, ""},
		{"a mode logged after the last request is not told", []session.Event{hdr, mode(true)}, true, NoticeOn},
		{"the last request counts, not the first", []session.Event{hdr, mode(true), hdr}, true, ""},
		{"a mode logged with the request's own fold", []session.Event{hdr, mode(true), hdr, mode(false)}, false, NoticeOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Notice(tc.events, tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if n != nil {
					t.Errorf("notice %+v, want none", *n)
				}
				return
			}
			want := pipeline.ContextMessage{Plugin: "plan-mode", Texts: []string{tc.want}, Form: "notice", Summary: tc.want}
			if n == nil || n.Plugin != want.Plugin || len(n.Texts) != 1 || n.Texts[0] != want.Texts[0] || n.Form != want.Form || n.Summary != want.Summary || n.Content != nil {
				t.Errorf("notice %+v, want %+v", n, want)
			}
		})
	}
	if _, err := Notice([]session.Event{{Type: session.KindPlanMode, Seq: 4, Data: json.RawMessage(`{}`)}, hdr}, true); err == nil {
		t.Error("a plan/mode without active before the request: no error")
	}
}

// TestNoticeTexts pins the VERBATIM texts.
func TestNoticeTexts(t *testing.T) {
	if NoticeOn != "The user switched this session to plan mode." || NoticeOff != "The user switched this session back to the default mode." {
		t.Errorf("texts %q, %q", NoticeOn, NoticeOff)
	}
}

// TestSelectionNotices: when a user's selection is narrated, as upstream's
// set (a commit between turns: the notice is returned at once) and its
// pre-step (a pending selection: the notice is returned by the step that
// appends it, computed before the append); an approved plan's exit is
// never narrated; a noop and a cancel between turns are not either.
func TestSelectionNotices(t *testing.T) {
	type step struct {
		do   string // "on", "off", "open", "close", "header", "boundary", "exit"
		want string // the notice Set or OnBoundary returned ("": none)
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a commit before any request", []step{{do: "on"}, {do: "open"}, {do: "boundary"}}},
		{"a commit after a request", []step{{do: "open"}, {do: "header"}, {do: "close"}, {"on", NoticeOn}}},
		{"/plan off committed after a request in plan mode", []step{{do: "on"}, {do: "open"}, {do: "header"}, {do: "close"}, {"off", NoticeOff}}},
		{"/plan off with plan mode already off", []step{{do: "open"}, {do: "header"}, {do: "close"}, {do: "off"}}},
		{"a pending on, narrated at the next step", []step{{do: "open"}, {do: "header"}, {do: "on"}, {"boundary", NoticeOn}, {do: "boundary"}}},
		{"a pending off, narrated at the next step", []step{{do: "on"}, {do: "open"}, {do: "header"}, {do: "off"}, {"boundary", NoticeOff}}},
		{"a pending on before any request", []step{{do: "open"}, {do: "on"}, {do: "boundary"}}},
		{"a pending selection cancelled back to the told mode", []step{{do: "open"}, {do: "header"}, {do: "on"}, {do: "off"}, {do: "boundary"}}},
		{"an approved exit is not narrated", []step{{do: "on"}, {do: "open"}, {do: "header"}, {do: "exit"}, {do: "boundary"}}},
		{"a pending off after an exit is narrated", []step{{do: "on"}, {do: "open"}, {do: "header"}, {do: "exit"}, {do: "on"}, {do: "off"}, {"boundary", NoticeOff}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := sessiontest.New(t, sid, "/ws")
			s := &Service{}
			for i, st := range tc.steps {
				var n *pipeline.ContextMessage
				var err error
				switch st.do {
				case "open":
					appendEv(t, log, session.KindTurnStart, map[string]int{"turn": 1})
				case "close":
					appendEv(t, log, session.KindTurnEnd, map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}})
				case "header":
					appendEv(t, log, session.KindRequestHeader, map[string]any{"header": map[string]string{}, "reason": "initial"})
				case "boundary":
					var ms []pipeline.ContextMessage
					if ms, err = s.OnBoundary(log); len(ms) > 1 {
						t.Fatalf("step %d: notices %+v, want at most one", i, ms)
					} else if len(ms) == 1 {
						n = &ms[0]
					}
				case "exit":
					exitApproved(t, s, log)
				default:
					_, n, err = s.Set(log, st.do == "on")
				}
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, st.do, err)
				}
				got := ""
				if n != nil {
					got = n.Summary
				}
				if got != st.want {
					t.Errorf("step %d (%s): notice %q, want %q", i, st.do, got, st.want)
				}
			}
		})
	}
}

// TestCommandNotice: /plan and /plan off carry the notice of a switch
// they committed, for the caller to queue.
func TestCommandNotice(t *testing.T) {
	log := sessiontest.New(t, sid, "/ws")
	s := &Service{}
	appendEv(t, log, session.KindRequestHeader, map[string]any{"header": map[string]string{}, "reason": "initial"})
	on, err := s.Command(log, " plan it")
	if err != nil || on.Notice == nil || on.Notice.Summary != NoticeOn || on.Message != "plan it" {
		t.Fatalf("/plan = %+v, %v", on, err)
	}
	appendEv(t, log, session.KindRequestHeader, map[string]any{"header": map[string]string{}, "reason": "change"})
	off, err := s.Command(log, "off")
	if err != nil || off.Notice == nil || off.Notice.Summary != NoticeOff {
		t.Fatalf("/plan off = %+v, %v", off, err)
	}
	again, err := s.Command(log, "off")
	if err != nil || again.Notice != nil {
		t.Errorf("/plan off again = %+v, %v; want no notice", again, err)
	}
}

// exitApproved runs an approved exit_plan_mode on log.
func exitApproved(t *testing.T, s *Service, log *session.Log) {
	t.Helper()
	ask := func(context.Context, []askuser.Question) ([]askuser.Answer, error) {
		return []askuser.Answer{{ID: ReviewID, Selected: []string{ApproveLabel}}}, nil
	}
	regs, err := New(Config{Plan: s, Ask: ask})
	if err != nil {
		t.Fatal(err)
	}
	reg := pipelinetest.Registry(t, toolreg.Defs(regs...)...)
	r := reg.Execute(pipeline.NewCall("c1", ExitName, json.RawMessage(`{"plan":"# P"}`), &pipeline.Agent{ID: "root", Session: log}, context.Background()))
	if r.IsError {
		t.Fatalf("exit: %s", blocksText(r.Content))
	}
}
