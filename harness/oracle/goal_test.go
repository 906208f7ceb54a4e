package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// goalWrapupRel is the given goal recording below the repository root, as
// upstream's suite lays it out; goalWrapup is it from this package.
var (
	goalWrapupRel = filepath.Join("transcripts", "frontends", "examples", "acp-agent", "tests", "goal-snapshots", "goal-wrapup")
	goalWrapup    = filepath.Join("..", "..", goalWrapupRel)
)

// TestGoalScriptError: a script that does not fit the goal suite (its own
// override, child scripts, every input step) is refused, naming each
// reason; one that fits is not.
func TestGoalScriptError(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *Script)
		want string
	}{
		{"fits", func(*Script) {}, ""},
		{"override", func(s *Script) { s.Override = json.RawMessage(`[]`) }, "no replay.override.json of its own"},
		{"children", func(s *Script) { s.Children = []Child{{}} }, "no child scripts"},
		{"all steps", func(s *Script) { s.AllSteps = []recording.Step{{Op: "initialize"}} }, "opens a session"},
	} {
		s := &Script{Prompts: []string{"p"}, Turns: [][]Step{{{Text: "DONE"}}}}
		tc.edit(s)
		err := GoalScriptError(s)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	o := &Oracle{dir: t.TempDir()}
	if _, err := o.RecordGoal(context.Background(), "n", &Script{Prompts: []string{"p"}, Turns: [][]Step{{{Text: "x"}}}, Children: []Child{{}}}, Options{}); err == nil || !strings.Contains(err.Error(), "no child scripts") {
		t.Errorf("RecordGoal of a script with children: %v", err)
	}
}

// TestGoalOverride: a goal recording's override is the script's steps in
// order, across turns, each one whole-script entry of the chunks
// Script.Encode writes for it (the same call ids), a {{fromRequest:...}}
// in a call's arguments kept for llm-replay to resolve; our replay's loader
// reads it as a whole script.
func TestGoalOverride(t *testing.T) {
	s := &Script{Prompts: []string{"p"}, Turns: [][]Step{
		{{Calls: []Call{{Name: "create_goal", Args: json.RawMessage(`{"objective":"o"}`)}}}, {Text: "GOAL READY"}},
		{{Calls: []Call{{Name: "update_goal", Args: json.RawMessage(`{"goal_id":"{{fromRequest:goal-[0-9a-f-]+}}","revision":1,"action":"complete"}`)}}}, {Text: "closing"}},
	}}
	over, err := GoalOverride(s)
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Kind   string            `json:"kind"`
		Chunks []json.RawMessage `json:"chunks"`
	}
	if err := json.Unmarshal(over, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Fatalf("%d entries, want one per step (4): %s", len(entries), over)
	}
	files, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var encoded [][]byte // the chunks Encode wrote, in order
	for _, l := range bytes.Split(bytes.TrimSpace(files[recording.SessionFile]), []byte("\n"))[1:] {
		var ev struct {
			Data struct {
				Chunk json.RawMessage `json:"chunk"`
			} `json:"data"`
		}
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, ev.Data.Chunk)
	}
	var got [][]byte
	for _, e := range entries {
		if e.Kind != "chunks" {
			t.Errorf("entry kind %q, want chunks", e.Kind)
		}
		for _, c := range e.Chunks {
			got = append(got, c)
		}
	}
	if !slices.EqualFunc(got, encoded, bytes.Equal) {
		t.Errorf("override chunks differ from Encode's:\n%s\nwant %s", got, encoded)
	}
	if !bytes.Contains(over, []byte(`"call_00_probe0002"`)) || !bytes.Contains(over, []byte(`{{fromRequest:goal-[0-9a-f-]+}}`)) {
		t.Errorf("override lacks the second call's id or the placeholder: %s", over)
	}
	dir := t.TempDir()
	files[recording.OverrideFile], files[recording.SessionFile] = over, []byte(goalHeader)
	files[recording.SessionExpectedFile] = append([]byte(goalHeader), []byte(`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`+"\n")...)
	files[recording.SettingsFile] = []byte(`{"profile":"goal"}`)
	if err := writeTree(dir, files); err != nil {
		t.Fatal(err)
	}
	rec, err := recording.Load(dir)
	if err != nil {
		t.Fatalf("our loader refuses the goal layout: %v", err)
	}
	if rec.Frontend != recording.Goal || rec.Override == nil || len(rec.Override.Replace) != 4 {
		t.Errorf("loaded as %q with override %+v, want goal with 4 entries", rec.Frontend, rec.Override)
	}
}

// TestGoalReproducesTheGivenRecording: upstream's published goal packages,
// mounted by the oracle's goal front end, reproduce the given goal
// recording (its whole log and stdout) unchanged.
func TestGoalReproducesTheGivenRecording(t *testing.T) {
	o := needAgent(t)
	res, err := o.Replay(context.Background(), goalWrapup, Options{Frontend: recording.Goal})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Match() {
		t.Fatalf("upstream's goal suite: %s\n%s", res.Verdict(), res.Files["stderr.txt"])
	}
}

// TestRecordGoal records one script through upstream's goal suite:
// upstream reproduces it, the recording is in the goal-snapshots layout
// (and nothing else), it is classified goal, and its log holds the goal's
// creation, goal round 1 (turn 2) and the completion's wrap-up.
func TestRecordGoal(t *testing.T) {
	o := needAgent(t)
	s := &Script{Steps: []recording.Step{{Op: "promptAndWaitForAgentMessage", Text: "Make a goal.", WaitForText: "GOAL READY"},
		{Op: "waitForTurnStart", MinimumTurn: 2}, {Op: "waitForTurnEnd"}},
		Turns: [][]Step{
			{{Calls: []Call{{Name: "create_goal", Args: json.RawMessage(`{"objective":"Probe the goal front end","max_goal_rounds":1}`)}}}, {Text: "GOAL READY"}},
			{{Calls: []Call{{Name: "update_goal", Args: json.RawMessage(`{"goal_id":"{{fromRequest:goal-[0-9a-f-]+}}","revision":1,"action":"complete"}`)}}}, {Text: "GOAL PROBE CLOSED"}},
		}}
	rec, err := o.RecordGoal(context.Background(), "goal-probe", s, Options{Settings: Settings{MountSettings: MountSettings{Reminder: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Stable() {
		t.Fatalf("upstream does not reproduce its own recording: %s\n%s", rec.Check.Verdict(), rec.Check.Files["stderr.txt"])
	}
	want := []string{recording.InputFile, recording.SessionFile, recording.OverrideFile, recording.SessionExpectedFile, recording.StdoutFile, recording.SettingsFile}
	if got := slices.Sorted(maps.Keys(rec.Files)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("files %v, want %v", got, want)
	}
	if fe, err := recording.ClassifyFiles("r", slices.Collect(maps.Keys(rec.Files))); err != nil || fe != recording.Goal {
		t.Errorf("classified %q (%v), want goal", fe, err)
	}
	log := string(rec.Files[recording.SessionExpectedFile])
	for _, w := range []string{`"operation":"create"`, `"turn":2`, `"operation":"complete"`, "<goal_complete>", "GOAL PROBE CLOSED"} {
		if !strings.Contains(log, w) {
			t.Errorf("the log lacks %s:\n%s", w, log)
		}
	}
}
