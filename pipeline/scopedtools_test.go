package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/pipeline"
)

// TestScopedTools: a tool registered through a scope is its agent's (and
// the agents below it) only, exempt from the scope's own masks but not from
// an ancestor's, shadows a global one for those agents, and goes with the
// scope.
func TestScopedTools(t *testing.T) {
	w := newWorld(t)
	reg := mustReg(t)
	report := func(tag string) pipeline.Tool {
		return pipeline.Tool{Name: "report", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(tag + "@" + call.Agent().ID)}}, nil
		}}
	}
	reg(w.r.In(w.A.Scope()).Register(report("a-layer")))
	view := func(a *pipeline.Agent) []string { return toolNames(w.r.ToolsFor(a)) }
	for _, c := range []struct {
		agent *pipeline.Agent
		want  []string
	}{
		{w.A, []string{"read", "write", "report"}},
		{w.C, []string{"read", "write", "report"}}, // bound under a
		{w.B, []string{"read", "write"}},           // a sibling
		{nil, []string{"read", "write"}},           // agentless
	} {
		if diff := cmp.Diff(c.want, view(c.agent)); diff != "" {
			t.Errorf("view of %v (-want +got):\n%s", c.agent, diff)
		}
	}
	if got := w.call(w.A, "report").Text(); got != "a-layer@a" {
		t.Errorf("a's call: %q", got)
	}
	if got := w.call(w.B, "report").Text(); got != `Error: unknown tool "report"` {
		t.Errorf("b's call of a's tool: %q, want unknown tool", got)
	}
	if _, err := w.r.In(w.A.Scope()).Register(report("again")); err == nil || !strings.Contains(err.Error(), `tool "report" is already registered in scope of agent "a"`) {
		t.Errorf("a second report in a's layer: %v", err)
	}
	// a's own mask does not hide a's own tool; c's mask (below) hides it for c
	reg(w.r.In(w.A.Scope()).Restrict(pipeline.Filter{Allow: []string{"read"}}))
	if diff := cmp.Diff([]string{"read", "report"}, view(w.A)); diff != "" {
		t.Errorf("a's view with its own allow-mask (-want +got):\n%s", diff)
	}
	reg(w.r.In(w.C.Scope()).Restrict(pipeline.Filter{Deny: []string{"read"}}))
	// a nearer layer shadows: c gets its own report
	reg(w.r.In(w.C.Scope()).Register(report("c-layer")))
	if got := w.call(w.C, "report").Text(); got != "c-layer@c" {
		t.Errorf("c's call: %q, want c's own tool", got)
	}
	if diff := cmp.Diff([]string{"report"}, view(w.C)); diff != "" {
		t.Errorf("c's view (-want +got):\n%s", diff)
	}
	// a global tool of the same name is shadowed for a, seen by b
	reg(w.r.Register(report("global")))
	if got := w.call(w.B, "report").Text(); got != "global@b" {
		t.Errorf("b's call: %q", got)
	}
	if got := w.call(w.A, "report").Text(); got != "a-layer@a" {
		t.Errorf("a's call with a global report: %q", got)
	}
	w.C.Scope().End()
	w.A.Scope().End()
	if got := w.call(w.B, "report").Text(); got != "global@b" {
		t.Errorf("b after a ended: %q", got)
	}
	if _, err := w.r.In(w.A.Scope()).Register(report("late")); err == nil {
		t.Error("an ended scope took a tool")
	}
}
