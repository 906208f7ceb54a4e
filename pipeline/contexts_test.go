package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/pipeline"
)

// Attributed context messages follow upstream's additionalContexts rules: an
// accept appends the decision's after the result's own, a block keeps only
// its own, a cancellation keeps them, and no stage can change another's copy.
func TestContextMessages(t *testing.T) {
	w := pipeline.ContextMessage{Plugin: "wrapper", Texts: []string{"w"}}
	p := pipeline.ContextMessage{Plugin: "hooks-claude-code", Texts: []string{"a", "b"}}
	tests := []struct {
		name       string
		post       pipeline.PostDecision
		cancelPost bool
		want       []pipeline.ContextMessage
		wantError  bool
	}{
		{"accept appends after the result's own", pipeline.PostDecision{Kind: pipeline.PostAccept, ContextMessages: []pipeline.ContextMessage{p}}, false, []pipeline.ContextMessage{w, p}, false},
		{"accept without messages keeps the result's", pipeline.Accept(), false, []pipeline.ContextMessage{w}, false},
		{"block keeps only its own", pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock("no")}, ContextMessages: []pipeline.ContextMessage{p}}, false, []pipeline.ContextMessage{p}, true},
		{"block without messages drops the result's", pipeline.PostDecision{Kind: pipeline.PostBlock}, false, nil, true},
		{"cancellation keeps them", pipeline.PostDecision{Kind: pipeline.PostAccept, ContextMessages: []pipeline.ContextMessage{p}}, true, []pipeline.ContextMessage{w, p}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {}))
			r.Register(pipeline.Tool{Name: "t", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
				return pipeline.Output{Value: json.RawMessage(`1`), Content: []pipeline.Block{pipeline.TextBlock("ok")}}, nil
			}})
			r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
				res, err := next(ctx)
				res.ContextMessages = append(res.ContextMessages, pipeline.ContextMessage{Plugin: w.Plugin, Texts: append([]string(nil), w.Texts...)})
				return res, err
			})
			r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
				res.ContextMessages[0].Texts[0] = "changed by a listener" // a copy: must not leak
				if tt.cancelPost {
					cancel()
				}
				return tt.post, nil
			})
			res := r.Execute(pipeline.NewCall("c1", "t", json.RawMessage(`{}`), nil, ctx))
			if diff := cmp.Diff(tt.want, res.ContextMessages); diff != "" {
				t.Errorf("ContextMessages (-want +got):\n%s", diff)
			}
			if res.IsError != tt.wantError {
				t.Errorf("IsError = %v, want %v", res.IsError, tt.wantError)
			}
		})
	}
}
