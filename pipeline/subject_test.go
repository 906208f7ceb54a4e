package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// TestApprovalRequestSubject: what a request is about, in one line, for the
// person asked: an escalation's call with its modes and justification, an
// ask's call with its arguments, nothing for a request without a call.
func TestApprovalRequestSubject(t *testing.T) {
	call := pipeline.NewCall("c1", "write", json.RawMessage(`{ "file_path": "/etc/x",  "content": "y" }`), nil, context.Background())
	for _, tc := range []struct {
		name string
		req  pipeline.ApprovalRequest
		want string
	}{
		{"escalation", pipeline.ApprovalRequest{Escalation: &pipeline.EscalationAsk{Tool: "bash", Args: json.RawMessage(`{"command": "make install"}`), Mode: "danger-full-access", Standing: "read-only", Justification: "installs into /usr"}},
			`bash {"command":"make install"}, with sandbox danger-full-access instead of read-only: installs into /usr`},
		{"escalation without arguments", pipeline.ApprovalRequest{Escalation: &pipeline.EscalationAsk{Tool: "bash", Mode: "danger-full-access", Standing: "workspace-write", Justification: "j"}},
			`bash {}, with sandbox danger-full-access instead of workspace-write: j`},
		{"ask", pipeline.ApprovalRequest{Call: call}, `write {"file_path":"/etc/x","content":"y"}`},
		{"no call", pipeline.ApprovalRequest{ToolName: "bash", Reason: "r"}, ""},
	} {
		if got := tc.req.Subject(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
