package projection

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestEveryEventTypeIsCoveredOrNamed: every event type a recording may hold
// (recording.EventTypes, upstream's vocabulary, which our stack writes a
// part of) is projected, or left out with a reason a note names; so is every
// source kind of user/message and every splice target. A type or a source
// kind the projection does not know is an error naming the event.
func TestEveryEventTypeIsCoveredOrNamed(t *testing.T) {
	data := map[string]map[string]any{
		"user/message":        {"content": []any{}, "source": map[string]any{"kind": "plugin", "plugin": "x"}},
		"agent/inbox/spliced": {"target": "next-turn", "start": 0.0, "inserted": []any{}},
	}
	for typ := range recording.EventTypes {
		d := data[typ]
		if d == nil {
			d = map[string]any{}
		}
		if _, f := project(typ, d); f != nil {
			continue
		}
		what, why, err := uncompared(typ, d)
		if err != nil || what == "" || why == "" {
			t.Errorf("%s is neither compared nor left out with a reason (%q, %q, %v)", typ, what, why, err)
		}
	}
	for _, kind := range []string{"user", "plugin", "agent-instructions", "skill-catalog", "coordinator", "subagent-report", "subagent-settled"} {
		d := map[string]any{"content": []any{}, "source": map[string]any{"kind": kind}}
		if _, f := project("user/message", d); f == nil {
			t.Errorf("a user/message of source kind %s is not compared", kind)
		}
	}
	staged := map[string]any{"target": "next-step", "start": 0.0, "inserted": []any{}}
	if _, f := project("agent/inbox/spliced", staged); f != nil {
		t.Error("a next-step splice is compared; its note says it is not")
	}
	if what, why, err := uncompared("agent/inbox/spliced", staged); what != stagedSplice || why == "" || err != nil {
		t.Errorf("a next-step splice: %q %q %v", what, why, err)
	}
	for _, tc := range []struct {
		typ  string
		d    map[string]any
		want string
	}{
		{"no/such-type", map[string]any{}, `seq 7: event type "no/such-type", which the replay neither compares nor knows to leave out`},
		{"user/message", map[string]any{"content": []any{}, "source": map[string]any{"kind": "narrator"}}, `seq 7: a user/message of source kind "narrator"`},
		{"agent/inbox/spliced", map[string]any{"target": "next-week"}, `seq 7: an agent/inbox/spliced of target "next-week"`},
	} {
		raw, _ := json.Marshal(tc.d)
		_, _, err := ProjectCovered([]recording.Event{{Type: tc.typ, Seq: 7, Data: raw}}, Normalizer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.typ, err, tc.want)
		}
	}
}

// TestThePromptAndItsSpliceAreCompared: a user's prompt projects its text
// blocks (an edited prompt differs), and so does the next-turn splice that
// queues it.
func TestThePromptAndItsSpliceAreCompared(t *testing.T) {
	prompt := func(text string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "source": map[string]any{"kind": "user"}, "role": "user"}
	}
	kind, f := project("user/message", prompt("Read a.txt"))
	if kind != KindPrompt || !slices.Equal(f["texts"].([]any), []any{"Read a.txt"}) {
		t.Fatalf("prompt: %s %v", kind, f)
	}
	if _, g := project("user/message", prompt("Read b.txt")); Compare([]Item{{Turn: 1, Kind: kind, Fields: f}}, []Item{{Turn: 1, Kind: kind, Fields: g}}).Mismatched != 1 {
		t.Error("an edited prompt matches")
	}
	splice := map[string]any{"target": "next-turn", "start": 0.0, "inserted": []any{prompt("Read a.txt")}}
	kind, f = project("agent/inbox/spliced", splice)
	ins, _ := f["inserted"].([]any)
	if kind != KindSplice || len(ins) != 1 || !slices.Equal(ins[0].(map[string]any)["texts"].([]any), []any{"Read a.txt"}) {
		t.Fatalf("splice: %s %v", kind, f)
	}
}

// TestCoverageNote: the note counts the compared events per type and the
// left-out ones grouped by reason, each reason once; LeftBeyond keeps only
// what the other log leaves out none of.
func TestCoverageNote(t *testing.T) {
	ev := func(typ string, data string) recording.Event {
		return recording.Event{Type: typ, Data: json.RawMessage(data)}
	}
	events := []recording.Event{
		ev("turn/start", `{"turn":1}`),
		ev("assistant/chunk", `{}`), ev("assistant/chunk", `{}`), ev("assistant/message", `{}`),
		ev("tool/call", `{"name":"bash","callId":"c","arguments":"{}"}`),
		ev("turn/end", `{"reason":{"kind":"stop"}}`),
	}
	_, cov, err := ProjectCovered(events, Normalizer{})
	if err != nil {
		t.Fatal(err)
	}
	want := "session.jsonl: events compared tool/call 1, turn/end 1; not compared: assistant/chunk 2, assistant/message 1 (" + whyModel + "); turn/start 1 (" + whyTurnOpen + ")"
	if got := cov.Note("session.jsonl"); got != want {
		t.Errorf("note:\n got %s\nwant %s", got, want)
	}
	if got := (Coverage{}).Note("x"); got != "x: events compared none; not compared: none" {
		t.Errorf("empty note: %s", got)
	}
	_, ours, _ := ProjectCovered(append(events, ev("session/end-seed", `{}`)), Normalizer{})
	if extra := ours.LeftBeyond(cov); len(extra.Left) != 1 || extra.Left["session/end-seed"] != 1 || len(extra.Compared) != 0 {
		t.Errorf("LeftBeyond: %+v", extra)
	}
}
