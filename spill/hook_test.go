package spill

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// The policy is hooked with PrependPostExecute and calls next first, so it
// bounds whatever the other post-execute listeners decided, including ones
// registered after it.
func TestHookedOutermostOnTheRegistry(t *testing.T) {
	big := strings.Repeat("output line\n", 1000)
	tests := []struct {
		name     string
		setup    func(reg *pipeline.Registry)
		body     string
		isError  bool
		spilled  bool
		contains string
	}{
		{name: "large body is bounded", body: big, spilled: true},
		{name: "small body passes", body: "small\n", contains: "small\n"},
		{name: "replacement by a later listener is bounded", body: "small\n", spilled: true, setup: func(reg *pipeline.Registry) {
			reg.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
				return pipeline.PostDecision{Kind: pipeline.PostAccept, Content: []pipeline.Block{pipeline.TextBlock(big)}}, nil
			})
		}},
		{name: "a later listener shrinking the result wins", body: big, contains: "redacted", setup: func(reg *pipeline.Registry) {
			reg.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
				return pipeline.PostDecision{Kind: pipeline.PostAccept, Content: []pipeline.Block{pipeline.TextBlock("redacted")}}, nil
			})
		}},
		{name: "thrown tool error is spilled and stays an error", body: big, isError: true, spilled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, TokenConfig(300), "")
			reg := pipeline.NewRegistry()
			p.Hook(reg)
			if tt.setup != nil {
				tt.setup(reg)
			}
			body := tt.body
			reg.Register(pipeline.Tool{Name: "bash", Parameters: json.RawMessage(`{"type":"object"}`), Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
				if tt.isError {
					return pipeline.Output{}, &bigError{body}
				}
				return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(body)}}, nil
			}})
			res := reg.Execute(pipeline.NewCall("c1", "bash", json.RawMessage(`{}`), newCall(t, "bash", "s").Agent(), nil))
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v", res.IsError)
			}
			if got := noticeRe.MatchString(res.Text()); got != tt.spilled {
				t.Errorf("spilled = %v, want %v: %.200q", got, tt.spilled, res.Text())
			}
			if tt.contains != "" && !strings.Contains(res.Text(), tt.contains) {
				t.Errorf("text %q lacks %q", res.Text(), tt.contains)
			}
			if tt.spilled && EstimateTokens(res.Text()) > 300 {
				t.Errorf("over the cap: %d", EstimateTokens(res.Text()))
			}
		})
	}
}

type bigError struct{ msg string }

func (e *bigError) Error() string { return e.msg }

func TestRemovedHookStopsTransforming(t *testing.T) {
	p, _ := newPolicy(t, TokenConfig(300), "")
	reg := pipeline.NewRegistry()
	remove := p.Hook(reg)
	big := strings.Repeat("x", 10000)
	reg.Register(pipeline.Tool{Name: "bash", Parameters: json.RawMessage(`{"type":"object"}`), Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(big)}}, nil
	}})
	agent := newCall(t, "bash", "s").Agent()
	if res := reg.Execute(pipeline.NewCall("c1", "bash", json.RawMessage(`{}`), agent, nil)); res.Text() == big {
		t.Fatal("hooked policy did not spill")
	}
	remove()
	if res := reg.Execute(pipeline.NewCall("c2", "bash", json.RawMessage(`{}`), agent, nil)); res.Text() != big {
		t.Error("removed policy still transforms")
	}
}

func TestDisabledPolicyIsANoOp(t *testing.T) {
	var nilPolicy *Policy
	res := result(strings.Repeat("x", 1<<16))
	for name, p := range map[string]*Policy{"nil policy": nilPolicy, "omitted cap": {}} {
		t.Run(name, func(t *testing.T) {
			got, spilled := p.Apply(newCall(t, "bash", "s"), res)
			if spilled || got.Text() != res.Text() {
				t.Error("disabled policy transformed the result")
			}
		})
	}
}
