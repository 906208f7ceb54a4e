package replay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/pipeline/session"
)

// TestWebGoalCommandRunsItsRounds replays upstream's web goal-multi-turn-actions
// (testdata/replay/unreproducible): the user's /goal creates and arms the
// goal, the goal-round driver runs its two rounds as turns, and the model
// completes it in the second. It cannot match: the results named below are
// the recording machine's (macOS ls -la and find order, a macOS bash's
// message), or unseeded random picks, and the suite's replay.override.json
// changes three calls (docs/replay.md); every other compared event must
// match (an unseeded pick may match too), so a change of the goal's path
// shows.
func TestWebGoalCommandRunsItsRounds(t *testing.T) {
	logs := t.TempDir()
	r := replay.Replay(context.Background(), filepath.Join(root, "testdata/replay/unreproducible/goal-multi-turn-actions"), replay.Options{LogDir: logs})
	if r.Verdict != replay.Mismatch {
		t.Fatalf("verdict %s (%s), want mismatch", r.Verdict, r.Summary())
	}
	unreproducible := []string{
		"tool/result call_00_IVvwEvXl7JJoIHrqvlDi1572", // ls -la on macOS
		"tool/result call_00_XlYaTHoKielffCybfcXb9253", // find's macOS order
		"tool/call call_00_dAM4qfVp4LLtRCiJi7d71418",   // the override hides shuf
		"tool/result call_00_dAM4qfVp4LLtRCiJi7d71418", // a macOS bash's message
		"tool/result call_00_flxIP8K77cJ8bKt5YRol0386", // random.choice, unseeded
		"tool/result call_00_wwDXszkz3z9JwKb8jUXj2737", // random.choice, unseeded
		"tool/call call_00_3K2lg9zGfGsTvuh19xv65220",   // the override seeds the pick
		"tool/call call_00_5KtqpQWh0ErEMqidxC795565",   // the override's call: its id, the goal id placeholder
		"tool/result call_00_5KtqpQWh0ErEMqidxC795565", // the override's call id
	}
	var differing []string
	for _, p := range r.Comparison.Pairs {
		if p.Match {
			continue
		}
		if p.Expected == nil || p.Got == nil {
			t.Fatalf("an item missing or extra: %+v\n%s", p, r.Detail())
		}
		id, _ := p.Expected.Fields["callId"].(string)
		differing = append(differing, p.Expected.Kind+" "+id)
	}
	for _, d := range differing { // an unseeded pick can hit the recorded one
		if !slices.Contains(unreproducible, d) {
			t.Fatalf("%s differs (all differing: %q), want only the unreproducible %q\n%s", d, differing, unreproducible, r.Detail())
		}
	}
	var ops, rounds, ends, done []string
	for _, e := range logEvents(t, r.LogPath) {
		var d map[string]any
		_ = json.Unmarshal(e.Data, &d)
		switch e.Type {
		case session.KindGoalChange:
			ops = append(ops, d["operation"].(string))
		case session.KindUserMessage:
			if src, _ := d["source"].(map[string]any); src["kind"] == "goal" {
				rounds = append(rounds, string(mustJSON(src["round"])))
			}
		case session.KindTurnEnd:
			ends = append(ends, string(mustJSON(d["reason"])))
		case session.KindCommandDone:
			done = append(done, d["kind"].(string)+": "+strings.SplitN(d["text"].(string), "\n", 2)[0])
		}
	}
	want := [][]string{{"create", "complete"}, {"1", "2"}, {`{"kind":"completed"}`, `{"kind":"completed"}`}, {"success: Goal created"}}
	for i, got := range [][]string{ops, rounds, ends, done} {
		if !slices.Equal(got, want[i]) {
			t.Errorf("our log: %q, want %q", got, want[i])
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// logEvents reads a session log of ours (one event a line after the header).
func logEvents(t *testing.T, path string) []session.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []session.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e session.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type != "" && e.Type != "session" {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
