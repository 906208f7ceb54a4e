package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestJSONRPCScriptError: a script that does not fit the SDK's path (one
// prompt, no answers, the log as its script, no overlay switch, no child in
// the minimal composition) is refused, naming each reason; one that fits
// is not.
func TestJSONRPCScriptError(t *testing.T) {
	editor := []Step{{Calls: []Call{{Name: EditorTool, Args: json.RawMessage(`{"command":"view","path":"{{cwd}}/a.txt"}`)}}}, {Text: "DONE"}}
	for _, tc := range []struct {
		name string
		edit func(s *Script, set *Settings)
		want string
	}{
		{"fits", func(*Script, *Settings) {}, ""},
		{"children in the default composition", func(s *Script, _ *Settings) { s.Children = []Child{{}} }, ""},
		{"two prompts", func(s *Script, _ *Settings) { s.Prompts = append(s.Prompts, "q") }, "one prompt"},
		{"input steps", func(s *Script, _ *Settings) { s.Steps = []recording.Step{{Op: "waitForTurnEnd"}} }, "one prompt"},
		{"answers", func(s *Script, _ *Settings) { s.PermissionAnswers = []recording.Answer{{Kind: "allow_once"}} }, "no approval channel"},
		{"override", func(s *Script, _ *Settings) { s.Override = json.RawMessage(`[]`) }, "no replay.override.json"},
		{"switch", func(_ *Script, set *Settings) { set.Reminder = true }, "no overlay switch: PROBE_REMINDER=1"},
		{"children in the minimal composition", func(s *Script, _ *Settings) { s.Turns[0], s.Children = editor, []Child{{}} }, "delegates nothing"},
	} {
		s := &Script{Prompts: []string{"p"}, Turns: [][]Step{{{Text: "DONE"}}}}
		var set Settings
		tc.edit(s, &set)
		err := JSONRPCScriptError(s, set)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestJSONRPCSettings: a JSON-RPC recording's settings name the default
// composition's one-shot subagent tool (as the given recordings' do), or
// profile minimal for a script that calls the editor, in our settings'
// fields.
func TestJSONRPCSettings(t *testing.T) {
	for _, minimal := range []bool{false, true} {
		b, err := jsonrpcSettings("Do it.", minimal)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var s recording.Settings
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("minimal %v: not our settings %s: %v", minimal, b, err)
		}
		switch {
		case s.Prompt != "Do it.":
			t.Errorf("prompt %q", s.Prompt)
		case minimal && (s.Profile != recording.ProfileMinimal || s.OneShotSubagent != nil):
			t.Errorf("minimal: %s", b)
		case !minimal && (s.Profile != "" || s.OneShotSubagent == nil || s.OneShotSubagent.MaxDepth != 3 || s.OneShotSubagent.RunInBackground):
			t.Errorf("default: %s", b)
		}
	}
}

// jsonrpcGiven are the given JSON-RPC recordings, as upstream's suite lays
// them out.
var jsonrpcGiven = filepath.Join("..", "..", "transcripts", "frontends", "examples", "jsonrpc-agent", "tests", "snapshots")

// TestJSONRPCReproducesTheGivenRecordings: the published SDK client and
// server, in the oracle's reconstructed compositions, reproduce every given
// JSON-RPC recording (notifications, result, and every log) unchanged.
func TestJSONRPCReproducesTheGivenRecordings(t *testing.T) {
	o := needAgent(t)
	ents, err := os.ReadDir(jsonrpcGiven)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		res, err := o.Replay(context.Background(), filepath.Join(jsonrpcGiven, e.Name()), Options{Frontend: recording.JSONRPC})
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if !res.Match() || (e.Name() == "subagent-spawn-in-process") != (len(res.ChildMatch) == 1) {
			t.Errorf("%s: upstream's SDK path: %s %v\n%s", e.Name(), res.Verdict(), res.Report, res.Files["stderr.txt"])
		}
	}
}

// TestRecordJSONRPC records one script through upstream's SDK path:
// upstream reproduces it, the recording is in the jsonrpc-agent snapshots'
// layout (and nothing else: no input.json), it is classified JSON-RPC,
// and its notifications end with the session idle.
func TestRecordJSONRPC(t *testing.T) {
	o := needAgent(t)
	s := &Script{Prompts: []string{"Delegate, then reply DONE."}, Workspace: map[string]string{"a.txt": "alpha\n"},
		Turns:    [][]Step{{{Calls: []Call{{Name: "subagent", Args: json.RawMessage(`{"description":"probe","prompt":"Answer."}`)}}}, {Text: "DONE"}}},
		Children: []Child{{Turns: [][]Step{{{Calls: []Call{{Name: "bash", Args: json.RawMessage(`{"command":"cat a.txt; printf JSONRPC_MARK"}`)}}}, {Text: "child says hi"}}}}}}
	rec, err := o.RecordJSONRPC(context.Background(), "jsonrpc-probe", s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Stable() {
		t.Fatalf("upstream does not reproduce its own recording: %s %v\n%s", rec.Check.Verdict(), rec.Check.Report, rec.Check.Files["stderr.txt"])
	}
	want := []string{recording.SettingsFile, recording.SessionFile, recording.ChildFile(1), recording.NotificationsFile, recording.ResultExpectedFile, "workspace/a.txt"}
	if got := slices.Sorted(maps.Keys(rec.Files)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("files %v, want %v", got, want)
	}
	if fe, err := recording.ClassifyFiles("r", slices.Collect(maps.Keys(rec.Files))); err != nil || fe != recording.JSONRPC {
		t.Errorf("classified %q (%v), want jsonrpc", fe, err)
	}
	notes := string(rec.Files[recording.NotificationsFile])
	for _, w := range []string{`"method":"subagent.started"`, `"method":"subagent.finished"`, "JSONRPC_MARK", `{"method":"session.status","params":{"sessionId":"{{sessionId}}","status":"idle"}}` + "\n"} {
		if !strings.Contains(notes, w) {
			t.Errorf("the notifications lack %s:\n%s", w, notes)
		}
	}
	if got := string(rec.Files[recording.ResultExpectedFile]); got != `{"sessionId":"{{sessionId}}","finalResponse":"DONE"}`+"\n" {
		t.Errorf("result %q", got)
	}
}
