package replay

import (
	"context"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
)

// TestUIAnswersEveryRequest: the web UI as the answerer answers every
// approval request its way, whatever the queue holds; without it an
// empty queue cancels.
func TestUIAnswersEveryRequest(t *testing.T) {
	tests := []struct {
		name  string
		ui    pipeline.ApprovalOutcome
		queue []recording.Answer
		want  []pipeline.ApprovalOutcome
	}{
		{"the UI allows", pipeline.AllowedOnce, nil, []pipeline.ApprovalOutcome{pipeline.AllowedOnce, pipeline.AllowedOnce, pipeline.AllowedOnce}},
		{"the UI rejects over a queue", pipeline.Rejected, []recording.Answer{{Kind: "allow_once"}}, []pipeline.ApprovalOutcome{pipeline.Rejected, pipeline.Rejected}},
		{"no UI", "", []recording.Answer{{Kind: "allow_once"}}, []pipeline.ApprovalOutcome{pipeline.AllowedOnce, pipeline.Cancelled}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &answers{queue: tc.queue, wire: &bridge{}, ui: tc.ui}
			for i, want := range tc.want {
				got, err := a.answer(context.Background(), pipeline.ApprovalRequest{CallID: "c"})
				if err != nil || got != want {
					t.Fatalf("answer %d = %s, %v; want %s", i, got, err, want)
				}
			}
		})
	}
}

// TestComposedPolicy: a web session whose first step is a /permission
// switch is composed under upstream's default profile, which the switch
// leaves; every other recording under its own policy.
func TestComposedPolicy(t *testing.T) {
	own := recording.Policy{Mode: "read-only", Approval: "ask"}
	switchFirst := recording.Input{Steps: []recording.Step{{Op: recording.PermissionOp, Text: "read-only"}, {Op: "prompt", Text: "go"}}}
	promptFirst := recording.Input{Steps: []recording.Step{{Op: "prompt", Text: "go"}, {Op: recording.PermissionOp, Text: "read-only"}}}
	tests := []struct {
		name string
		rec  recording.Recording
		want recording.Policy
	}{
		{"web, switch first", recording.Recording{Frontend: recording.Web, Input: switchFirst}, recording.Policy{Mode: "danger-full-access", Approval: "never"}},
		{"web, prompt first", recording.Recording{Frontend: recording.Web, Input: promptFirst}, own},
		{"acp", recording.Recording{Frontend: recording.ACP, Input: switchFirst}, own},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := composedPolicy(&tc.rec, own); got != tc.want {
				t.Fatalf("composedPolicy = %+v, want %+v", got, tc.want)
			}
		})
	}
}
