package replay

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/askuser"
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

// TestWebReadMeta: a web recording's read result without meta is compared
// with ours without its meta (and a note says so); a read result the
// recording has meta for, another tool's result and another front end's
// recording keep ours.
func TestWebReadMeta(t *testing.T) {
	call := func(name, id string) projection.Item {
		return projection.Item{Kind: projection.KindCall, Fields: map[string]any{"name": name, "callId": id}}
	}
	result := func(id string, meta any) projection.Item {
		f := map[string]any{"callId": id, "text": "x", "isError": false}
		if meta != nil {
			f["meta"] = meta
		}
		return projection.Item{Kind: projection.KindResult, Fields: f}
	}
	ours := map[string]any{"path": "{{cwd}}/a", "totalLines": 1.0}
	tests := []struct {
		name     string
		fe       recording.Frontend
		expected []projection.Item
		match    bool
	}{
		{"a web read without meta", recording.Web, []projection.Item{call("read", "r"), result("r", nil)}, true},
		{"a web read with other meta", recording.Web, []projection.Item{call("read", "r"), result("r", map[string]any{"path": "{{cwd}}/b"})}, false},
		{"a web write without meta", recording.Web, []projection.Item{call("write", "r"), result("r", nil)}, false},
		{"an ACP read without meta", recording.ACP, []projection.Item{call("read", "r"), result("r", nil)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.expected[0].Fields["name"].(string)
			got := []projection.Item{call(name, "r"), result("r", ours)}
			p := &prepared{rec: &recording.Recording{Frontend: tc.fe}, expected: tc.expected}
			c, note := p.compare(got)
			matched := c.Matched == c.Total && c.Total == 2
			if matched != tc.match || (note != "") != tc.match {
				t.Fatalf("compare: %d/%d matched, note %q; want match %v and a note only then", c.Matched, c.Total, note, tc.match)
			}
			if got[1].Fields["meta"] == nil {
				t.Fatal("compare changed our items")
			}
		})
	}
}

// TestWebQuestions: the web UI answers each question with the answer of
// its id, in the order asked; a question without one fails the call.
func TestWebQuestions(t *testing.T) {
	ask := webQuestions([]recording.QuestionAnswer{{ID: "b", Selected: []string{"x"}}, {ID: "a", Selected: []string{}, Custom: "c"}})
	got, err := ask(context.Background(), []askuser.Question{{ID: "a"}, {ID: "b"}})
	want := []askuser.Answer{{ID: "a", Selected: []string{}, Custom: "c"}, {ID: "b", Selected: []string{"x"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("answers %+v, %v; want %+v", got, err, want)
	}
	if _, err := ask(context.Background(), []askuser.Question{{ID: "a"}, {ID: "z"}}); err == nil || !strings.Contains(err.Error(), `no answer for question "z"`) {
		t.Fatalf("an unanswered question: %v", err)
	}
}
