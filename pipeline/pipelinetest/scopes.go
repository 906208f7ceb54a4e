package pipelinetest

import (
	"fmt"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// Scopes is a scope tree: a preset standing scope with agents A and B bound
// under it, and agent C bound under A.
type Scopes struct {
	Preset  *pipeline.Scope
	A, B, C *pipeline.Agent
}

// NewScopes binds a and b under a fresh standing scope
// "agentPreset:standard" and c under a, failing the test if a bind fails.
func NewScopes(t testing.TB, a, b, c *pipeline.Agent) *Scopes {
	t.Helper()
	s := &Scopes{Preset: pipeline.NewScope("agentPreset:standard"), A: a, B: b, C: c}
	for _, x := range []struct {
		child  *pipeline.Agent
		parent *pipeline.Scope
	}{{a, s.Preset}, {b, s.Preset}, {c, a.Scope()}} {
		if _, err := x.child.Scope().Bind(x.parent); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Scope names a scope of the tree for tables: "global" is nil (the
// registry's global scope), "preset" the standing scope, and "a", "b", "c"
// the agents' own scopes. Any other name panics: a misspelt table row must
// not quietly mean the global scope.
func (s *Scopes) Scope(name string) *pipeline.Scope {
	switch name {
	case "global":
		return nil
	case "preset":
		return s.Preset
	}
	a := s.Agent(name)
	if a == nil {
		panic(fmt.Sprintf("pipelinetest: no scope named %q (want global, preset, a, b or c)", name))
	}
	return a.Scope()
}

// Agent is the agent named "a", "b" or "c"; nil (an agentless call) for any
// other name.
func (s *Scopes) Agent(name string) *pipeline.Agent {
	switch name {
	case "a":
		return s.A
	case "b":
		return s.B
	case "c":
		return s.C
	}
	return nil
}
