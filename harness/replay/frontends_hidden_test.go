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
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// hiddenDir holds recordings of upstream's suite scenarios whose own
// recordings were not published, made as each README says.
const hiddenDir = "testdata/replay/frontends-hidden"

// TestHiddenSDKGoalRecordings replays the JSON-RPC and goal recordings of
// testdata/replay/frontends-hidden by their names alone (no
// dshsim.replay.json: the settings upstream's test files give are
// recording.FrontendSuiteSettings'), each of which must match.
func TestHiddenSDKGoalRecordings(t *testing.T) {
	isolate.Require(t)
	ds := dirs(t, hiddenDir+"/jsonrpc", hiddenDir+"/goal")
	var names []string
	for _, d := range ds {
		names = append(names, filepath.Base(d))
		if _, err := os.Stat(filepath.Join(d, "dshsim.replay.json")); err == nil {
			t.Errorf("%s: has a dshsim.replay.json; its settings must come by name", d)
		}
	}
	if want := []string{"bash-tool", "goal-round-driver"}; !slices.Equal(names, want) {
		t.Fatalf("recordings %v, want %v", names, want)
	}
	for _, r := range replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 1}) {
		if r.Verdict != replay.Match || r.Comparison.Total == 0 {
			t.Errorf("%s: %s\n%s", r.Name, r.Summary(), r.Detail())
		}
	}
}

// TestGoalRoundDriverHoldsTheSuitesAssertions: the goal-round-driver
// recording's whole log says what goal.snapshot.ts asserts of it: the
// calls create_goal then get_goal, automatic rounds 1 and 2, the second
// turn cancelled, and the goal paused at revision 2 after two rounds of
// two (the replay of it must match this log, TestHiddenSDKGoalRecordings).
func TestGoalRoundDriverHoldsTheSuitesAssertions(t *testing.T) {
	f, err := os.Open(filepath.Join(root, hiddenDir, "goal/goal-round-driver/session.expected.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type event struct {
		Type string `json:"type"`
		Data struct {
			Name   string `json:"name"`
			Source struct {
				Kind  string `json:"kind"`
				Round int    `json:"round"`
			} `json:"source"`
			Reason json.RawMessage `json:"reason"` // a turn/end's {kind}, a request/header's string
			Goal   struct {
				Objective     string `json:"objective"`
				Phase         string `json:"phase"`
				Revision      int    `json:"revision"`
				MaxGoalRounds int    `json:"maxGoalRounds"`
			} `json:"goal"`
			RoundsStarted int `json:"roundsStarted"`
		} `json:"data"`
	}
	var calls, ends []string
	var rounds []int
	var last event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "tool/call":
			calls = append(calls, e.Data.Name)
		case "user/message":
			if e.Data.Source.Kind == "goal" && e.Data.Source.Round > 0 {
				rounds = append(rounds, e.Data.Source.Round)
			}
		case "turn/end":
			var r struct {
				Kind string `json:"kind"`
			}
			if err := json.Unmarshal(e.Data.Reason, &r); err != nil {
				t.Fatal(err)
			}
			ends = append(ends, r.Kind)
		case "goal/change":
			last = e
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	g := last.Data.Goal
	if !slices.Equal(calls, []string{"create_goal", "get_goal"}) || !slices.Equal(rounds, []int{1, 2}) ||
		!slices.Equal(ends, []string{"completed", "completed", "aborted"}) ||
		g.Objective != "Finish the ACP goal-round-driver snapshot proof" || g.Phase != "paused" || g.Revision != 2 ||
		g.MaxGoalRounds != 2 || last.Data.RoundsStarted != 2 {
		t.Errorf("calls %v, rounds %v, turn ends %v, last goal %+v after %d rounds", calls, rounds, ends, g, last.Data.RoundsStarted)
	}
}

// TestUnknownSDKScenarioReplaysByItsFrontEnd: a JSON-RPC run whose name
// the settings table does not know, with no dshsim.replay.json, replays
// with its log's one prompt and the example's default overlay (the one
// subagent tool, one-shot, depth 3): copies of the published text-turn and
// subagent-spawn-in-process under other names match, the delegating one
// only under that overlay.
func TestUnknownSDKScenarioReplaysByItsFrontEnd(t *testing.T) {
	isolate.Require(t)
	base := filepath.Join(t.TempDir(), "examples/jsonrpc-agent/tests/snapshots")
	var ds []string
	for src, name := range map[string]string{"text-turn": "another-text-turn", "subagent-spawn-in-process": "another-delegation"} {
		dst := filepath.Join(base, name)
		if err := recording.CopyTree(filepath.Join(root, "transcripts/frontends/examples/jsonrpc-agent/tests/snapshots", src), dst); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dst, recording.SettingsFile)); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, dst)
	}
	for _, r := range replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 1}) {
		if r.Verdict != replay.Match || r.Comparison.Total == 0 || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "the prompt is the log's one user message") }) {
			t.Errorf("%s: %s\n%s", r.Name, r.Summary(), r.Detail())
		}
	}
}
