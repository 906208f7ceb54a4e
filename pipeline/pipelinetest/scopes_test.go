package pipelinetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

func TestNewScopesBuildsTheTree(t *testing.T) {
	a, b, c := &pipeline.Agent{ID: "a"}, &pipeline.Agent{ID: "b"}, &pipeline.Agent{ID: "c"}
	s := NewScopes(t, a, b, c)
	for _, tc := range []struct {
		agent *pipeline.Agent
		chain string
	}{
		{a, "a preset"},
		{b, "b preset"},
		{c, "c a preset"},
	} {
		var names []string
		for _, sc := range tc.agent.Scope().Chain() {
			names = append(names, scopeName(s, sc))
		}
		if got := strings.Join(names, " "); got != tc.chain {
			t.Errorf("chain of %s: %s, want %s", tc.agent.ID, got, tc.chain)
		}
	}
	for name, want := range map[string]*pipeline.Scope{"global": nil, "preset": s.Preset, "a": a.Scope(), "b": b.Scope(), "c": c.Scope()} {
		if got := s.Scope(name); got != want {
			t.Errorf("Scope(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]*pipeline.Agent{"a": a, "b": b, "c": c, "": nil, "d": nil} {
		if got := s.Agent(name); got != want {
			t.Errorf("Agent(%q) = %v, want %v", name, got, want)
		}
	}
	defer func() {
		if r := fmt.Sprint(recover()); !strings.Contains(r, `no scope named "presett"`) {
			t.Errorf("Scope of a misspelt name: panic %q, want one naming it", r)
		}
	}()
	s.Scope("presett")
}

// scopeName names sc by the agent whose scope it is, or "preset".
func scopeName(s *Scopes, sc *pipeline.Scope) string {
	for _, a := range []*pipeline.Agent{s.A, s.B, s.C} {
		if a.Scope() == sc {
			return a.ID
		}
	}
	if sc == s.Preset {
		return "preset"
	}
	return sc.String()
}

// fatalTB records Fatal instead of stopping the test.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Helper()           {}
func (f *fatalTB) Fatal(args ...any) { f.fatal = fmt.Sprint(args...) }

func TestNewScopesFailsTheTestWhenABindFails(t *testing.T) {
	a := &pipeline.Agent{ID: "a"}
	if _, err := a.Scope().Bind(pipeline.NewScope("elsewhere")); err != nil {
		t.Fatal(err)
	}
	f := &fatalTB{TB: t}
	NewScopes(f, a, &pipeline.Agent{ID: "b"}, &pipeline.Agent{ID: "c"})
	if !strings.Contains(f.fatal, "bound") {
		t.Errorf("binding a scope bound already: fatal %q, want the bind error", f.fatal)
	}
}

func TestRegistryHoldsTheToolsAndFailsOnARefusal(t *testing.T) {
	run := func(context.Context, *pipeline.Call) (pipeline.Output, error) { return pipeline.Output{}, nil }
	tool := pipeline.Tool{Name: "t", Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Run: run}
	if _, ok := Registry(t, tool).Lookup("t"); !ok {
		t.Error("the registered tool is not in the registry")
	}
	f := &fatalTB{TB: t}
	Registry(f, tool, tool)
	if f.fatal == "" {
		t.Error("registering a name twice did not fail the test")
	}
}
