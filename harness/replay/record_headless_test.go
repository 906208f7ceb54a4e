package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestHeadlessInputError: a headless run is one task with no approval
// channel; each way an input.json is not is named.
func TestHeadlessInputError(t *testing.T) {
	prompt := recording.Step{Op: "prompt", Text: "p"}
	head := []recording.Step{{Op: "initialize"}, {Op: "newSession"}}
	for _, tc := range []struct {
		name string
		in   recording.Input
		want string
	}{
		{"one task", recording.Input{Steps: append(head, prompt)}, ""},
		{"a prompt alone", recording.Input{Steps: []recording.Step{prompt}}, ""},
		{"two prompts", recording.Input{Steps: append(head, prompt, prompt)}, "2 prompt steps, want 1"},
		{"no prompt", recording.Input{Steps: head}, "0 prompt steps, want 1"},
		{"a cancel", recording.Input{Steps: append(head, prompt, recording.Step{Op: "promptAndCancel"})}, `step "promptAndCancel" is not a headless run's`},
		{"answers", recording.Input{Steps: append(head, prompt), PermissionAnswers: []recording.Answer{{Kind: "allow_once"}}}, "no approval channel"},
	} {
		err := replay.HeadlessInputError(tc.in)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestRecordHeadless records the scenario as a headless run: the recording
// is upstream's headless layout (stream-json.expected.jsonl beside
// session.jsonl, no ACP frames), loads as headless and replays MATCH; with
// no approval channel the escalated call's ask is decided unavailable (the
// workspace-write scenario asks, and nobody is asked at the terminal).
func TestRecordHeadless(t *testing.T) {
	isolate.Require(t)
	f := newFakeServer(t, scenarioSteps)
	opt := recordOptions(f)
	opt.Frontend = recording.Headless
	out, err := record(t, f, writeScenario(t, false), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"input.json", "session.jsonl", "stream-json.expected.jsonl", "projection.expected.json", "workspace/greeting.txt"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("recording lacks %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "stdout.expected.jsonl")); err == nil {
		t.Error("a headless recording holds ACP frames")
	}
	if fe, err := recording.DetectFrontend(out, "recorded"); err != nil || fe != recording.Headless {
		t.Fatalf("the recording is detected as %q (%v), want headless", fe, err)
	}
	session, _ := os.ReadFile(filepath.Join(out, "session.jsonl"))
	for _, want := range []string{`"outcome":"unavailable"`, `requires approval, but no approval channel is available`} {
		if !strings.Contains(string(session), want) {
			t.Errorf("session.jsonl lacks %s", want)
		}
	}
	stream, _ := os.ReadFile(filepath.Join(out, "stream-json.expected.jsonl"))
	lines := bytes.Split(bytes.TrimSuffix(stream, []byte("\n")), []byte("\n"))
	var first, last struct {
		Type      string `json:"type"`
		SessionID string `json:"sessionId"`
		Output    string `json:"output"`
		Event     struct {
			Type string `json:"type"`
			Time int64  `json:"time"`
		} `json:"event"`
	}
	if json.Unmarshal(lines[0], &first) != nil || json.Unmarshal(lines[len(lines)-1], &last) != nil {
		t.Fatalf("stream records do not decode:\n%s", stream)
	}
	if first.Type != "session_event" || first.Event.Type != "agent/inbox/spliced" || first.SessionID != "{{sessionId}}" || first.Event.Time != 0 {
		t.Errorf("first record %+v, want the prompt's splice, its time zeroed and the session a token", first)
	}
	if last.Type != "result" || last.Output != "DONE" {
		t.Errorf("last record %+v, want the result with output DONE", last)
	}
	noKeyIn(t, filepath.Dir(out))
	res := replay.Replay(context.Background(), out, replay.Options{})
	if res.Verdict != replay.Match {
		t.Fatalf("the recording does not replay: %s\n%s", res.Summary(), res.Detail())
	}
}

// TestRecordHeadlessRefusesWhatDoesNotFit: a scenario with permission
// answers, or a front end dsh-record does not write, is refused before the
// model is called, and nothing is written.
func TestRecordHeadlessRefusesWhatDoesNotFit(t *testing.T) {
	f := newFakeServer(t, scenarioSteps)
	for _, tc := range []struct {
		fe   recording.Frontend
		want string
	}{
		{recording.Headless, "input.json: not a headless run: permissionAnswers given, but the headless path has no approval channel"},
		{recording.JSONRPC, `front end "jsonrpc": dsh-record writes acp or headless recordings`},
	} {
		opt := recordOptions(f)
		opt.Frontend = tc.fe
		out, err := record(t, f, writeScenario(t, true), opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.fe, err, tc.want)
		}
		nothingWritten(t, out)
	}
	if f.requests() != 0 {
		t.Errorf("%d model requests, want none", f.requests())
	}
}
