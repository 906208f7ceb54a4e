package replay

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
)

// runningAgent is a driver whose turn runs (no loop: the test plays it),
// its inbox's splices kept by r.
func runningAgent(r *recorder) *driver {
	d := &driver{base: context.Background()}
	d.sched.init()
	d.inbox = newInbox(r)
	d.sched.phase = running
	return d
}

// TestWebSteersDeliverAtTheirPoint: a steer step is delivered only as the
// step it was recorded after ends, in its turn (not at another step's
// end, nor twice), as the web app's queued row steered: queued for a later
// turn, removed from it (canceled) and the same message steered into the
// next step; the client flags one never delivered, naming its line.
func TestWebSteersDeliverAtTheirPoint(t *testing.T) {
	rec := &recording.Recording{Input: recording.Input{Steps: []recording.Step{
		{Op: "prompt", Text: "go"},
		{Op: recording.SteerOp, Text: "BANANA", At: &recording.SteerPoint{Turn: 1, Step: 2, Line: 18}},
		{Op: recording.SteerOp, Text: "ORANGE", At: &recording.SteerPoint{Turn: 2, Step: 1, Line: 30}},
	}}}
	w := newWebSteers(rec)
	r := &recorder{}
	d := runningAgent(r)
	for _, at := range [][2]int{{1, 1}, {2, 2}, {1, 3}} {
		if err := w.stepEnded(d, at[0], at[1]); err != nil || len(r.events) != 0 {
			t.Fatalf("turn %d step %d's end: %v, splices %q; want none", at[0], at[1], err, r.events)
		}
	}
	if err := w.stepEnded(d, 1, 2); err != nil {
		t.Fatal(err)
	}
	if !w.delivered(1) || w.delivered(2) {
		t.Fatalf("delivered %v %v, want the first only", w.delivered(1), w.delivered(2))
	}
	want := []string{`"target":"next-turn","start":0,"inserted":[{"content":[{"type":"text","text":"BANANA"}],"source":{"kind":"user"}`,
		`"target":"next-turn","start":0,"removedCount":1,"inserted":[],"outcome":"canceled"}`,
		`"target":"next-step","start":0,"inserted":[{"content":[{"type":"text","text":"BANANA"}],"source":{"kind":"user"}`}
	if len(r.events) != len(want) {
		t.Fatalf("splices %q, want %d", r.events, len(want))
	}
	for i, w := range want {
		if !strings.Contains(r.events[i], w) {
			t.Errorf("splice %d = %s, want one holding %s", i, r.events[i], w)
		}
	}
	if p := d.inbox.pending(nextStep); len(p) != 1 || messageText(p[0]) != "BANANA" || len(d.inbox.pending(nextTurn)) != 0 {
		t.Fatalf("pending next-step %+v next-turn %+v; want the steered message in next-step alone", p, d.inbox.pending(nextTurn))
	}
	if err := w.stepEnded(d, 1, 2); err != nil || len(r.events) != 3 {
		t.Fatalf("the same step's end again: %v, %d splices; want no second delivery", err, len(r.events))
	}
	c := &client{steers: w}
	c.steer(1, rec.Input.Steps[1])
	c.steer(2, rec.Input.Steps[2])
	if want := `session.jsonl:30 steps[2] steer: "ORANGE" was not steered in: turn 2 ran no step 1 to its end, where the recording steers it`; !slices.Equal(c.flags, []string{want}) {
		t.Fatalf("flags %q, want %q", c.flags, want)
	}
	if newWebSteers(&recording.Recording{Input: recording.Input{Steps: rec.Input.Steps[:1]}}) != nil {
		t.Error("steers for a session without a steer step")
	}
}

// TestSteerQueuedIsRefusedWhenUnavailable: moving a queued message into
// the turn is refused, as upstream's steer-unavailable, when no turn runs
// or the message is no longer queued; nothing is spliced then.
func TestSteerQueuedIsRefusedWhenUnavailable(t *testing.T) {
	m := promptMessage([]pipeline.Block{pipeline.TextBlock("x")})
	r := &recorder{}
	d := runningAgent(r)
	if err := d.steerQueued(m); !errors.Is(err, errSteerUnavailable) || len(r.events) != 0 {
		t.Fatalf("not queued: %v, splices %q; want steer-unavailable", err, r.events)
	}
	if err := d.inbox.add(nextTurn, m); err != nil {
		t.Fatal(err)
	}
	d.sched.phase = idle
	if err := d.steerQueued(m); !errors.Is(err, errSteerUnavailable) || len(r.events) != 1 {
		t.Fatalf("no turn runs: %v, splices %q; want steer-unavailable", err, r.events)
	}
	d.sched.phase = running
	if err := d.steerQueued(m); err != nil || len(r.events) != 3 {
		t.Fatalf("queued, the turn running: %v, splices %q", err, r.events)
	}
}

// TestWebPlaces: a web session's user messages are compared by the number
// of model replies before each: one entered after another number of
// replies, one missing and one more are each flagged naming the line.
func TestWebPlaces(t *testing.T) {
	user := func(text string, line int) recording.Event {
		data, _ := json.Marshal(map[string]any{"content": []pipeline.Block{pipeline.TextBlock(text)}, "source": map[string]string{"kind": "user"}})
		return recording.Event{Type: "user/message", Data: data, Line: line}
	}
	reply := recording.Event{Type: "assistant/message", Data: json.RawMessage(`{"turn":1,"step":1}`)}
	rec := &recording.Recording{Frontend: recording.Web, LogFile: recording.SessionFile, Events: []recording.Event{user("go", 3), reply, user("steer", 18), reply}}
	tests := []struct {
		name string
		ours []recording.Event
		want []string
	}{
		{"where recorded", []recording.Event{user("go", 0), reply, user("steer", 0), reply}, nil},
		{"steered before the reply", []recording.Event{user("go", 0), user("steer", 0), reply, reply}, []string{`session.jsonl:18: the user's message "steer" entered the conversation after 1 model replies, ours after 0`}},
		{"typed after the turn", []recording.Event{user("go", 0), reply, reply, user("steer", 0)}, []string{`session.jsonl:18: the user's message "steer" entered the conversation after 1 model replies, ours after 2`}},
		{"never entered", []recording.Event{user("go", 0), reply, reply}, []string{`session.jsonl:18: the user's message "steer" never entered our conversation`}},
		{"one more", []recording.Event{user("go", 0), reply, user("steer", 0), user("steer", 0), reply}, []string{"session.jsonl: 2 user messages, ours 3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flags, notes, err := frontendChecks(rec, tc.ours, "/ws", "id")
			if err != nil || notes != nil || !slices.Equal(flags, tc.want) {
				t.Fatalf("frontendChecks = %q, %q, %v; want flags %q", flags, notes, err, tc.want)
			}
		})
	}
}
