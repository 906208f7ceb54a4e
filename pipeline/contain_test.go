package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
)

// panicking is an approval service that panics.
type panicking struct{}

func (panicking) Request(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	panic("approver broke")
}

// TestEveryStageContainsAPanic: a panic in any stage's callback (pre-execute
// listener, approval service, guard, execute wrapper before or after the
// body, the body, post-execute listener, result observer) never escapes
// Execute. Every stage that decides fails the call with the panic's message
// (those before the body without running it), a result observer's panic is
// logged and the result stands.
func TestEveryStageContainsAPanic(t *testing.T) {
	type want struct {
		text    string
		isError bool
		code    string
		ran     int    // body runs
		logged  string // what the registry logged
	}
	tests := []struct {
		stage string
		setup func(r *pipeline.Registry)
		want  want
	}{
		{"pre-execute", func(r *pipeline.Registry) {
			r.OnPreExecute(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				panic("pre broke")
			})
		}, want{text: "Error: pre broke", isError: true}},
		{"pre-execute after next", func(r *pipeline.Registry) {
			r.OnPreExecute(func(_ context.Context, _ *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				next()
				panic("pre broke late")
			})
		}, want{text: "Error: pre broke late", isError: true}},
		{"approval", func(r *pipeline.Registry) {
			r.OnPreExecute(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				return pipeline.Ask("needs approval"), nil
			})
			r.SetApprover(panicking{})
		}, want{text: "Error: approver broke", isError: true}},
		{"guard", func(r *pipeline.Registry) {
			r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) {
				panic(pipeline.NewError("GuardError", "GUARD_BROKE", "guard broke"))
			})
		}, want{text: "Error: guard broke", isError: true, code: "GUARD_BROKE"}},
		{"execute wrapper", func(r *pipeline.Registry) {
			r.OnExecute(func(context.Context, *pipeline.Call, func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
				panic("wrapper broke")
			})
		}, want{text: "Error: wrapper broke", isError: true}},
		{"execute wrapper after the body", func(r *pipeline.Registry) {
			r.OnExecute(func(ctx context.Context, _ *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
				next(ctx)
				panic(errors.New("wrapper broke late"))
			})
		}, want{text: "Error: wrapper broke late", isError: true, ran: 1}},
		{"execute wrapper inside a timeout", func(r *pipeline.Registry) {
			r.OnExecute(pipeline.Timeout(time.Minute))
			r.OnExecute(func(context.Context, *pipeline.Call, func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
				panic("inner wrapper broke")
			})
		}, want{text: "Error: inner wrapper broke", isError: true}},
		{"tool body", func(r *pipeline.Registry) {
			r.Unregister("echo")
			r.Register(pipeline.Tool{Name: "echo", Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) {
				panic("body broke")
			}})
		}, want{text: "Error: body broke", isError: true}},
		{"post-execute", func(r *pipeline.Registry) {
			r.OnPostExecute(func(context.Context, *pipeline.Call, pipeline.Result, func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
				panic("post broke")
			})
		}, want{text: "Error: post broke", isError: true, ran: 1}},
		{"result observer", func(r *pipeline.Registry) {
			r.OnResult(func(*pipeline.Call, pipeline.Result) { panic("observer broke") })
		}, want{text: "hi", ran: 1, logged: `tool "echo" (c1): tools/result observer failed: observer broke`}},
	}
	for _, tc := range tests {
		t.Run(tc.stage, func(t *testing.T) {
			st := &state{}
			var logged string
			r := pipeline.NewRegistry(pipeline.WithLogf(func(format string, args ...any) { logged += fmt.Sprintf(format, args...) }))
			if _, err := r.Register(echo(st)); err != nil {
				t.Fatal(err)
			}
			tc.setup(r)
			res := r.Execute(pipeline.NewCall("c1", "echo", json.RawMessage(`{"text":"hi"}`), testAgent, context.Background()))
			var code string
			if res.Error != nil && res.Error.Info != nil {
				code = res.Error.Info.Code
			}
			got := want{text: res.Text(), isError: res.IsError, code: code, ran: st.bodyRuns, logged: logged}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestTimeoutContainsAPanicOfItsOwnGoroutine: the timeout wrapper runs the
// rest of the chain in a goroutine of its own; a panic there (a wrapper
// called outside a registry, whose stages would contain it first) comes
// back as the call's error, never as a crash.
func TestTimeoutContainsAPanicOfItsOwnGoroutine(t *testing.T) {
	call := pipeline.NewCall("c1", "echo", json.RawMessage(`{}`), testAgent, context.Background())
	res, err := pipeline.Timeout(time.Minute)(context.Background(), call, func(context.Context) (pipeline.Result, error) {
		panic("chain broke")
	})
	if err == nil || pipeline.ErrorMessage(err) != "chain broke" || res.IsError || res.Content != nil {
		t.Errorf("Timeout = %+v, %v; want no result and the panic as the error", res, err)
	}
}
