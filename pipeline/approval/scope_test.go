package approval_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
)

// scopes is a preset standing scope with agents a and b under it and agent c
// under a; every agent has its own log with an open turn.
type scopes struct {
	preset  *pipeline.Scope
	a, b, c *pipeline.Agent
}

func newScopes(t *testing.T) *scopes {
	t.Helper()
	s := &scopes{preset: pipeline.NewScope("agentPreset:standard")}
	s.a = &pipeline.Agent{ID: "a", Session: newLog(t, "turn/start")}
	s.b = &pipeline.Agent{ID: "b", Session: newLog(t, "turn/start")}
	s.c = &pipeline.Agent{ID: "c", Session: newLog(t, "turn/start")}
	for _, x := range []struct {
		child  *pipeline.Agent
		parent *pipeline.Scope
	}{{s.a, s.preset}, {s.b, s.preset}, {s.c, s.a.Scope()}} {
		if _, err := x.child.Scope().Bind(x.parent); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *scopes) scope(name string) *pipeline.Scope {
	switch name {
	case "global":
		return nil
	case "preset":
		return s.preset
	}
	return s.agent(name).Scope()
}

func (s *scopes) agent(name string) *pipeline.Agent {
	return map[string]*pipeline.Agent{"a": s.a, "b": s.b, "c": s.c}[name]
}

// TestScopedAnswerers: an answerer registered for a scope sees only the
// requests of that scope's agent and of agents below it (upstream
// approval.spec 82/197/228); global answerers see all; the chain keeps
// registration order across global and scoped answerers.
func TestScopedAnswerers(t *testing.T) {
	tests := []struct {
		at        []string // answerers registered, in order, each recording its label and delegating
		requester string
		want      string // labels that saw the request, in chain order
	}{
		{[]string{"global", "a", "preset", "b", "c"}, "a", "global,a,preset"},
		{[]string{"global", "a", "preset", "b", "c"}, "b", "global,preset,b"},
		{[]string{"global", "a", "preset", "b", "c"}, "c", "global,a,preset,c"},
		{[]string{"c", "b"}, "a", ""},
	}
	for _, tc := range tests {
		t.Run(tc.requester+"@"+strings.Join(tc.at, "+"), func(t *testing.T) {
			s := newScopes(t)
			svc, _ := approval.New()
			var mu sync.Mutex
			var saw []string
			for _, at := range tc.at {
				at := at
				if _, err := svc.In(s.scope(at)).Answer(func(ctx context.Context, req *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
					mu.Lock()
					saw = append(saw, at)
					mu.Unlock()
					if req.Agent != s.agent(tc.requester) {
						t.Errorf("answerer %s got the request of %v", at, req.Agent.ID)
					}
					return next()
				}); err != nil {
					t.Fatal(err)
				}
			}
			out, err := svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: s.agent(tc.requester), ToolName: "write"})
			if err != nil || out != pipeline.Unavailable {
				t.Fatalf("outcome %v, %v; want unavailable (every answerer delegates)", out, err)
			}
			if got := strings.Join(saw, ","); got != tc.want {
				t.Fatalf("answerers that saw the request: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestScopedAnswererNeverAnswersForAnotherAgent: a granting answerer of
// agent b never grants a's request (a's request falls to the terminal).
func TestScopedAnswererNeverAnswersForAnotherAgent(t *testing.T) {
	s := newScopes(t)
	svc, _ := approval.New()
	if _, err := svc.In(s.b.Scope()).PrependAnswer(answer(pipeline.AllowedOnce)); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		agent *pipeline.Agent
		want  pipeline.ApprovalOutcome
	}{{s.a, pipeline.Unavailable}, {s.c, pipeline.Unavailable}, {s.b, pipeline.AllowedOnce}} {
		if got, err := svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: x.agent, ToolName: "write"}); err != nil || got != x.want {
			t.Errorf("request of %s: %v, %v; want %v", x.agent.ID, got, err, x.want)
		}
	}
}

// TestScopeEndRemovesAnswerers: ending a scope removes its answerers; a new
// registration through it is refused.
func TestScopeEndRemovesAnswerers(t *testing.T) {
	s := newScopes(t)
	svc, _ := approval.New()
	if _, err := svc.In(s.preset).Answer(answer(pipeline.AllowedOnce)); err != nil {
		t.Fatal(err)
	}
	req := pipeline.ApprovalRequest{Agent: s.a, ToolName: "write"}
	if got, _ := svc.Request(context.Background(), req); got != pipeline.AllowedOnce {
		t.Fatalf("before end: %v", got)
	}
	s.preset.End()
	if got, _ := svc.Request(context.Background(), req); got != pipeline.Unavailable {
		t.Fatalf("after end: %v, want unavailable (the answerer is gone)", got)
	}
	if _, err := svc.In(s.preset).Answer(answer(pipeline.AllowedOnce)); err == nil {
		t.Fatal("an ended scope took a new answerer")
	}
}

// TestNeverBeatsScopedAnswerers: policy never rejects before any answerer,
// scoped or prepended, runs; the pair is still audited.
func TestNeverBeatsScopedAnswerers(t *testing.T) {
	s := newScopes(t)
	svc, _ := approval.New()
	asked := false
	grant := func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
		asked = true
		return pipeline.AllowedOnce, nil
	}
	if _, err := svc.In(s.c.Scope()).PrependAnswer(grant); err != nil {
		t.Fatal(err)
	}
	if _, err := approval.SetSessionPolicy(s.c.Session, approval.Never); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: s.c, ToolName: "write"})
	if err != nil || got != pipeline.Rejected || asked {
		t.Fatalf("outcome %v, %v, answerer asked %v; want rejected without asking", got, err, asked)
	}
	if a := audits(t, s.c.Session); len(a) != 1 || a[0].decided["outcome"] != "rejected" {
		t.Fatalf("audit %+v", a)
	}
}
