package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/google/go-cmp/cmp"
)

// TestExecuteStagedCallbackOrder pins where the two scheduling callbacks run:
// Prepared after the last prepare stage (guards) and before the body, Commit
// after the body and before post-execute and the notification; each exactly
// once, on every path.
func TestExecuteStagedCallbackOrder(t *testing.T) {
	cases := []struct {
		name  string
		args  string
		setup func(r *pipeline.Registry, st *state)
		want  string
	}{
		{"allowed", `{"text":"x"}`, func(r *pipeline.Registry, st *state) {}, "pre guard prepared dispatch commit post result"},
		{"denied by a listener", `{"text":"x"}`, func(r *pipeline.Registry, st *state) {
			r.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				st.add("deny")
				return pipeline.Deny("no"), nil
			})
		}, "pre deny prepared commit post result"},
		{"denied by a guard", `{"text":"x"}`, func(r *pipeline.Registry, st *state) {
			r.AddGuard(func(ctx context.Context, call *pipeline.Call) (string, bool) { st.add("veto"); return "vetoed", true })
		}, "pre guard veto prepared commit post result"},
		{"listener error (final)", `{"text":"x"}`, func(r *pipeline.Registry, st *state) {
			r.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				return pipeline.Decision{}, errors.New("broken")
			})
		}, "pre prepared commit result"},
		{"arguments not JSON (final)", `{`, func(r *pipeline.Registry, st *state) {}, "prepared commit result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &state{}
			r := newRegistry(t, st)
			r.PrependPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				st.add("pre")
				return next()
			})
			r.AddGuard(func(ctx context.Context, call *pipeline.Call) (string, bool) { st.add("guard"); return "", false })
			c.setup(r, st)
			r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
				st.add("post")
				return next()
			})
			r.OnResult(func(*pipeline.Call, pipeline.Result) { st.add("result") })
			r.ExecuteStaged(pipeline.NewCall("c1", "echo", json.RawMessage(c.args), nil, nil), pipeline.Stages{
				Prepared: func() { st.add("prepared") },
				Commit:   func() { st.add("commit") },
			})
			if got := strings.Join(st.trace, " "); got != c.want {
				t.Errorf("stage order\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
}

type carrier struct {
	messages []pipeline.ContextMessage
}

func (c carrier) Error() string                              { return "failed after deferring" }
func (c carrier) ContextMessages() []pipeline.ContextMessage { return c.messages }

// TestBodyContexts: a body's context messages (run_code forwards its nested
// calls' there) reach the result, on a success and, through a
// ContextCarrier error, on a failure.
func TestBodyContexts(t *testing.T) {
	m1 := pipeline.ContextMessage{Plugin: "hooks-claude-code", Texts: []string{"m1"}}
	m2 := pipeline.ContextMessage{Plugin: "hooks-codex", Texts: []string{"m2"}}
	r := pipeline.NewRegistry()
	r.Register(pipeline.Tool{Name: "ok", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock("x")}, ContextMessages: []pipeline.ContextMessage{m1}}, nil
	}})
	r.Register(pipeline.Tool{Name: "fail", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		return pipeline.Output{}, carrier{[]pipeline.ContextMessage{m2}}
	}})
	res := r.Execute(pipeline.NewCall("1", "ok", json.RawMessage(`{}`), nil, nil))
	if diff := cmp.Diff([]pipeline.ContextMessage{m1}, res.ContextMessages); diff != "" {
		t.Errorf("success context messages (-want +got):\n%s", diff)
	}
	res = r.Execute(pipeline.NewCall("2", "fail", json.RawMessage(`{}`), nil, nil))
	if !res.IsError || res.Text() != "Error: failed after deferring" {
		t.Errorf("failure %+v", res)
	}
	if diff := cmp.Diff([]pipeline.ContextMessage{m2}, res.ContextMessages); diff != "" {
		t.Errorf("failure context messages (-want +got):\n%s", diff)
	}
}

// TestASignalAbortedOnceDispatchedReachesTheBody: Dispatched runs after the
// body runner read the signal, so a signal aborted from there (the run ends
// as soon as its scheduler saw the call dispatched) reaches the body: the
// call is "tool call aborted", never "aborted before dispatch". A scheduler
// waiting for Dispatched relies on it (run_code's quiesce). Dispatched runs
// once on every path, also when a wrapper never passes the call on.
func TestASignalAbortedOnceDispatchedReachesTheBody(t *testing.T) {
	r := pipeline.NewRegistry()
	var bodyErr error
	r.Register(pipeline.Tool{Name: "body", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		bodyErr = ctx.Err()
		return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock("ran")}}, nil
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	res := r.ExecuteStaged(pipeline.NewCall("c1", "body", json.RawMessage(`{}`), nil, ctx), pipeline.Stages{Dispatched: func() { n++; cancel() }})
	if bodyErr == nil {
		t.Fatalf("the body did not run with the aborted signal; result %q", res.Text())
	}
	if res.Text() != "Error: "+pipeline.MsgAborted || n != 1 {
		t.Errorf("result %q, Dispatched ran %d times; want %q once", res.Text(), n, "Error: "+pipeline.MsgAborted)
	}

	r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
		return pipeline.Result{Content: []pipeline.Block{pipeline.TextBlock("held")}}, nil
	})
	n = 0
	res = r.ExecuteStaged(pipeline.NewCall("c2", "body", json.RawMessage(`{}`), nil, context.Background()), pipeline.Stages{Dispatched: func() { n++ }})
	if res.Text() != "held" || n != 1 {
		t.Errorf("a wrapper that holds the call: result %q, Dispatched ran %d times, want once", res.Text(), n)
	}
}
