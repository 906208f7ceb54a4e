package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// TestTheTerminalPromptShowsTheCall: the person dsh-record asks about an
// escalation sees the command, the modes and the justification, not only
// the audited reason.
func TestTheTerminalPromptShowsTheCall(t *testing.T) {
	req := pipeline.ApprovalRequest{ToolName: "bash", CallID: "call_1", Reason: "escalate sandbox to danger-full-access: needs it",
		Escalation: &pipeline.EscalationAsk{Tool: "bash", Args: []byte(`{"command": "rm -rf /srv/data", "description": "clean"}`), Mode: "danger-full-access", Standing: "workspace-write", Justification: "needs it"}}
	var out bytes.Buffer
	a, err := askOn(context.Background(), strings.NewReader("y\n"), &out, *askOf(req))
	if err != nil || a.Kind != "allow_once" {
		t.Fatalf("answer %+v, %v", a, err)
	}
	want := "  the call: bash {\"command\":\"rm -rf /srv/data\",\"description\":\"clean\"}, with sandbox danger-full-access instead of workspace-write: needs it\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("the prompt\n%s\nlacks\n%s", out.String(), want)
	}
}

// TestARecordingHoldingTheKeyIsNotWritten: writeRecording checks every file
// it would write, the session log, stdout.expected.jsonl and the copied
// workspace, for the API key; a file holding it fails the write naming the
// file, and neither the recording nor its partial directory is left. The
// same recording without the key is written. Planted bug caught: the check
// disabled (the key written to disk).
func TestARecordingHoldingTheKeyIsNotWritten(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	for _, tc := range []struct{ name, prompt, logText, reply, file, want string }{
		{"clean", "list the files", "list the files", "DONE", "", ""},
		{"in the scenario", "use " + key, "list the files", "DONE", "", recording.InputFile},
		// the first file holding it, in name order: the projection copies the log's message
		{"in the session log", "list the files", "my key is " + key, "DONE", "", recording.ProjectionFile},
		{"in stdout", "list the files", "list the files", "the key: " + key, "", recording.StdoutFile},
		{"in the workspace", "list the files", "list the files", "DONE", "export KEY=" + key + "\n", "workspace/sub/.env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, parent, ws := t.TempDir(), t.TempDir(), t.TempDir()
			if tc.file != "" {
				harness.MustWrite(t, filepath.Join(dir, recording.WorkspaceDir, "sub", ".env"), tc.file)
			}
			id := newUUID()
			logPath := filepath.Join(t.TempDir(), "session.jsonl")
			log, err := session.Create(logPath, session.Header{ID: id, Cwd: ws})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := log.Append(session.KindUserMessage, map[string]any{"content": []map[string]string{{"type": "text", "text": tc.logText}}, "source": map[string]string{"kind": "user"}, "role": "user", "id": newUUID()}); err != nil {
				t.Fatal(err)
			}
			log.Close()
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			run := &runFacts{SessionID: id, Cwd: ws, Frames: []acpwire.Frame{acpwire.Initialized(false), acpwire.SessionCreated(), acpwire.AgentText(tc.reply), acpwire.Stop("end_turn")}}
			out := filepath.Join(parent, "rec")
			in := recording.Input{Steps: []recording.Step{{Op: "initialize"}, {Op: "newSession"}, {Op: "prompt", Text: tc.prompt}}}
			err = writeRecording(context.Background(), dir, out, in, recordResponse{Log: data, Run: run}, key, recording.ACP)
			left, _ := os.ReadDir(parent)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := recording.Load(out); err != nil || len(left) != 1 {
					t.Fatalf("the recording: %v; %d entries beside it", err, len(left))
				}
				return
			}
			if want := "the API key appears in " + tc.want + " (the model or a tool echoed it): nothing written"; err == nil || err.Error() != want {
				t.Fatalf("error %v, want %q", err, want)
			}
			if len(left) != 0 {
				t.Fatalf("left behind: %s", left[0].Name())
			}
		})
	}
}
