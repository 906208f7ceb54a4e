package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/pipeline"
)

// view is what one stage saw of a call.
type view struct {
	Ptr                       string
	CallID, RootCallID, Name  string
	Agent                     string // the agent pointer
	Parent                    string
	SignalIsCaller, HasParent bool
	Args                      string
}

func viewOf(call *pipeline.Call, caller context.Context) view {
	v := view{
		Ptr: fmt.Sprintf("%p", call), CallID: call.CallID(), RootCallID: call.RootCallID(), Name: call.Name(),
		Agent: fmt.Sprintf("%p", call.Agent()), SignalIsCaller: call.Signal() == caller, HasParent: call.Parent() != nil, Args: string(call.Args()),
	}
	if call.Parent() != nil {
		v.Parent = fmt.Sprintf("%p", call.Parent())
	}
	return v
}

func TestCallIdentity(t *testing.T) {
	agent := &pipeline.Agent{ID: "a"}
	ctx := context.Background()
	args := []byte(`{"path":"x"}`)
	top := pipeline.NewCall("call-1", "write", args, agent, ctx)
	args[2] = 'X'                             // the caller's bytes are not aliased
	subCtx, cancel := context.WithCancel(ctx) // the sub-call's own signal
	defer cancel()
	sub := pipeline.NewSubCall(top, "call-1:code:1", "read", json.RawMessage(`{}`), subCtx)
	tests := []struct {
		name string
		call *pipeline.Call
		want view
	}{
		{"top-level call", top, view{Ptr: fmt.Sprintf("%p", top), CallID: "call-1", RootCallID: "call-1", Name: "write", Agent: fmt.Sprintf("%p", agent), SignalIsCaller: true, Args: `{"path":"x"}`}},
		{"sub-call keeps the outer agent and root, and has the outer call as parent", sub, view{Ptr: fmt.Sprintf("%p", sub), CallID: "call-1:code:1", RootCallID: "call-1", Name: "read", Agent: fmt.Sprintf("%p", agent), Parent: fmt.Sprintf("%p", top), HasParent: true, Args: `{}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, viewOf(tc.call, ctx)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.call.Signal() == nil {
				t.Error("nil signal")
			}
			a := tc.call.Args()
			a[0] = '['
			if string(tc.call.Args()) != tc.want.Args {
				t.Error("a stage changed the frozen arguments through Args")
			}
		})
	}
	if nilOuter := pipeline.NewSubCall(nil, "c", "read", json.RawMessage(`{}`), nil); nilOuter.Parent() != nil || nilOuter.Agent() != nil || nilOuter.RootCallID() != "c" {
		t.Errorf("a sub-call of nil is not a top-level call: %+v", viewOf(nilOuter, nil))
	}
}

// TestEveryStageSeesOneIdentity: the same call object, with the same
// identity and arguments, reaches pre-execute, the guard, the wrapper, the
// body, post-execute and the observer; the call's signal stays the caller's
// even when a wrapper hands the body another context.
func TestEveryStageSeesOneIdentity(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []view
	note := func(call *pipeline.Call) { seen = append(seen, viewOf(call, ctx)) }
	reg := mustReg(t)
	sc := w.r.In(w.A.Scope())
	reg(sc.OnPreExecute(func(c context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		note(call)
		return next()
	}))
	reg(sc.AddGuard(func(c context.Context, call *pipeline.Call) (string, bool) { note(call); return "", false }))
	reg(sc.OnExecute(func(c context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
		note(call)
		other, stop := context.WithTimeout(context.Background(), time.Hour)
		defer stop()
		return next(other)
	}))
	w.r.Unregister("write")
	w.r.Register(pipeline.Tool{Name: "write", Run: func(c context.Context, call *pipeline.Call) (pipeline.Output, error) {
		note(call)
		return pipeline.Output{}, nil
	}})
	reg(sc.OnPostExecute(func(c context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		note(call)
		return next()
	}))
	reg(sc.OnResult(func(call *pipeline.Call, res pipeline.Result) { note(call) }))
	call := pipeline.NewCall("c1", "write", json.RawMessage(`{"path":"x"}`), w.A, ctx)
	if res := w.r.Execute(call); res.IsError {
		t.Fatal(res.Text())
	}
	if len(seen) != 6 {
		t.Fatalf("%d stages saw the call, want 6", len(seen))
	}
	want := viewOf(call, ctx)
	for i, v := range seen {
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("stage %d (-want +got):\n%s", i, diff)
		}
	}
}

// TestZeroCallIsRefused: a call not made by NewCall has no identity and runs nothing.
func TestZeroCallIsRefused(t *testing.T) {
	w := newWorld(t)
	for _, c := range []*pipeline.Call{nil, {}} {
		if res := w.r.Execute(c); res.Text() != "Error: pipeline: a call must be made with NewCall or NewSubCall; the call was not run" {
			t.Errorf("zero call: %q", res.Text())
		}
	}
	if w.ranList() != "" {
		t.Errorf("ran %q", w.ranList())
	}
}
