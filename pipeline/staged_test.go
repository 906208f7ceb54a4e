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
