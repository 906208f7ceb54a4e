package subagents_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/stack/subagents"
	"github.com/dshsim/dshsim/tools/subagent"
)

// loops starts no loop: New only checks that there is one.
type loops struct{}

func (loops) Start(*subagents.Child) (subagents.Loop, error) { return nil, nil }

// provider is a provider beyond spawn and fork, by name.
type provider string

func (p provider) Name() string                { return string(p) }
func (p provider) Info() subagent.ProviderInfo { return subagent.ProviderInfo{} }
func (p provider) Start(context.Context, subagent.Request) (subagent.Run, error) {
	return nil, nil
}

// TestNewRefusesAnIncompleteConfig: delegation needs a loop for children,
// an absolute sessions directory and providers of unique names beyond
// spawn and fork; without a configuration the runtime only delegates.
func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	const incomplete = "delegation needs an agent loop for children (Subagents.Loops) and an absolute Subagents.SessionsDir"
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  *subagents.Config
		want string
	}{
		{"none", nil, ""},
		{"complete", &subagents.Config{Loops: loops{}, SessionsDir: dir, Providers: []subagents.Provider{provider("codex"), provider("claude")}}, ""},
		{"no loops", &subagents.Config{SessionsDir: dir}, incomplete},
		{"a relative directory", &subagents.Config{Loops: loops{}, SessionsDir: "sessions"}, incomplete},
		{"a provider named spawn", &subagents.Config{Loops: loops{}, SessionsDir: dir, Providers: []subagents.Provider{provider(subagents.ProviderSpawn)}}, `a subagent provider named "spawn" is already registered`},
		{"a provider named fork", &subagents.Config{Loops: loops{}, SessionsDir: dir, Providers: []subagents.Provider{provider(subagents.ProviderFork)}}, `a subagent provider named "fork" is already registered`},
		{"two of one name", &subagents.Config{Loops: loops{}, SessionsDir: dir, Providers: []subagents.Provider{provider("codex"), provider("codex")}}, `a subagent provider named "codex" is already registered`},
	} {
		rt, err := subagents.New(nil, "", tc.cfg)
		switch {
		case tc.want == "" && (err != nil || rt == nil):
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || rt != nil):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestProviders: spawn and fork are the runtime's own, with their
// capabilities; another provider answers for itself; an unknown one is not.
func TestProviders(t *testing.T) {
	rt, err := subagents.New(nil, "", &subagents.Config{Loops: loops{}, SessionsDir: t.TempDir(), Providers: []subagents.Provider{provider("codex")}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]subagent.ProviderInfo{
		subagents.ProviderSpawn: {DepthLimit: true, Continuable: true},
		subagents.ProviderFork:  {InheritsContext: true, DepthLimit: true, Continuable: true},
		"codex":                 {},
	} {
		if got, ok := rt.Provider(name); !ok || got != want {
			t.Errorf("%s: %+v %v, want %+v", name, got, ok, want)
		}
	}
	if _, ok := rt.Provider("missing"); ok {
		t.Error("an unknown provider is described")
	}
}

// TestNewRuntimeContext: the text is kept whole, the sections without text
// are left out, the others keep their order.
func TestNewRuntimeContext(t *testing.T) {
	rc := subagents.NewRuntimeContext("whole", []policy.Section{{Name: "a", Text: "A"}, {Name: "empty"}, {Name: "b", Text: "B"}})
	var names []string
	for _, s := range rc.Sections {
		names = append(names, s.Name+"="+s.Text)
	}
	if rc.Text != "whole" || !slices.Equal(names, []string{"a=A", "b=B"}) {
		t.Errorf("%+v", rc)
	}
}
