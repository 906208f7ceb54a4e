package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

//go:noinline
func noopBody(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	return pipeline.Output{Content: []pipeline.Block{{Type: "text", Text: "ok"}}}, nil
}

// BenchmarkDirectBody is the baseline: the no-op body called directly.
func BenchmarkDirectBody(b *testing.B) {
	tool := pipeline.Tool{Name: "noop", Run: noopBody} // called through the same func value the registry holds
	call := pipeline.NewCall("c1", "noop", json.RawMessage(`{"path":"/tmp/x"}`), nil, context.Background())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Run(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPipelineCall is one call through the whole pipeline: three
// pre-execute listeners, two guards, one execute wrapper, the no-op body.
func BenchmarkPipelineCall(b *testing.B) {
	r := pipeline.NewRegistry()
	r.Register(pipeline.Tool{Name: "noop", Run: noopBody})
	for i := 0; i < 3; i++ {
		r.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
			return next()
		})
	}
	for i := 0; i < 2; i++ {
		r.AddGuard(func(ctx context.Context, call *pipeline.Call) (string, bool) { return "", false })
	}
	r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
		return next(ctx)
	})
	args := json.RawMessage(`{"path":"/tmp/x"}`)
	agent := &pipeline.Agent{ID: "a"}
	b.ReportAllocs()
	for b.Loop() {
		res := r.Execute(pipeline.NewCall("c1", "noop", args, agent, context.Background()))
		if res.IsError {
			b.Fatal(res.Text())
		}
	}
}
