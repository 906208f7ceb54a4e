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

// TestWebSteersDeliverAtTheirPoint: steer steps are delivered only as
// the step they were recorded after ends, in its turn (not at another
// step's end, nor twice), as the e2e files steer: the messages typed
// while the turn runs queued as rows first, then each steered in order,
// a queued row removed from next-turn (canceled) and the same message
// steered into next-step, a direct one steered straight in; the client
// flags one never delivered, naming its line.
func TestWebSteersDeliverAtTheirPoint(t *testing.T) {
	at := func(turn, step, line int, direct bool) *recording.SteerPoint {
		return &recording.SteerPoint{Turn: turn, Step: step, Line: line, Direct: direct}
	}
	rec := &recording.Recording{Input: recording.Input{Steps: []recording.Step{
		{Op: "prompt", Text: "go"},
		{Op: recording.SteerOp, Text: "BANANA", At: at(1, 2, 18, false)},
		{Op: recording.SteerOp, Text: "ORANGE", At: at(1, 2, 19, false)},
		{Op: recording.SteerOp, Text: "KIWI", At: at(1, 2, 20, true)},
		{Op: recording.SteerOp, Text: "LEMON", At: at(2, 1, 30, false)},
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
	for i, want := range []bool{false, true, true, true, false} {
		if w.delivered(i) != want {
			t.Errorf("step %d delivered %v, want %v", i, !want, want)
		}
	}
	row := func(text string) string {
		return `{"content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}`
	}
	want := []string{`"target":"next-turn","start":0,"inserted":[` + row("BANANA"),
		`"target":"next-turn","start":1,"inserted":[` + row("ORANGE"),
		`"target":"next-turn","start":0,"removedCount":1,"inserted":[],"outcome":"canceled"}`,
		`"target":"next-step","start":0,"inserted":[` + row("BANANA"),
		`"target":"next-turn","start":0,"removedCount":1,"inserted":[],"outcome":"canceled"}`,
		`"target":"next-step","start":1,"inserted":[` + row("ORANGE"),
		`"target":"next-step","start":2,"inserted":[` + row("KIWI")}
	if len(r.events) != len(want) {
		t.Fatalf("splices %q, want %d", r.events, len(want))
	}
	for i, w := range want {
		if !strings.Contains(r.events[i], w) {
			t.Errorf("splice %d = %s, want one holding %s", i, r.events[i], w)
		}
	}
	var texts []string
	for _, m := range d.inbox.pending(nextStep) {
		texts = append(texts, messageText(m))
	}
	if !slices.Equal(texts, []string{"BANANA", "ORANGE", "KIWI"}) || len(d.inbox.pending(nextTurn)) != 0 {
		t.Fatalf("pending next-step %q next-turn %+v; want the steered messages in next-step alone, in order", texts, d.inbox.pending(nextTurn))
	}
	if err := w.stepEnded(d, 1, 2); err != nil || len(r.events) != len(want) {
		t.Fatalf("the same step's end again: %v, %d splices; want no second delivery", err, len(r.events))
	}
	c := &client{steers: w}
	for i := 1; i < 5; i++ {
		c.steer(i, rec.Input.Steps[i])
	}
	if want := `session.jsonl:30 steps[4] steer: "LEMON" was not steered in: the recording steers it as turn 2's step 1 ends, which the replay did not reach`; !slices.Equal(c.flags, []string{want}) {
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
