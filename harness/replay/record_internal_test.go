package replay

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
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
