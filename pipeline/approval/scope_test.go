package approval_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
)

// newScopes is a preset standing scope with agents a and b under it and
// agent c under a; every agent has its own log with an open turn.
func newScopes(t *testing.T) *pipelinetest.Scopes {
	t.Helper()
	agent := func(id string) *pipeline.Agent { return &pipeline.Agent{ID: id, Session: newLog(t, "turn/start")} }
	return pipelinetest.NewScopes(t, agent("a"), agent("b"), agent("c"))
}

// TestScopedAnswerers: an answerer registered for a scope sees only the
// requests of that scope's agent and of agents below it (as upstream's
// approval tests pin it); global answerers see all; the chain keeps
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
				if _, err := svc.In(s.Scope(at)).Answer(func(ctx context.Context, req *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
					mu.Lock()
					saw = append(saw, at)
					mu.Unlock()
					if req.Agent != s.Agent(tc.requester) {
						t.Errorf("answerer %s got the request of %v", at, req.Agent.ID)
					}
					return next()
				}); err != nil {
					t.Fatal(err)
				}
			}
			out, err := svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: s.Agent(tc.requester), ToolName: "write"})
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
	if _, err := svc.In(s.B.Scope()).PrependAnswer(answer(pipeline.AllowedOnce)); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		agent *pipeline.Agent
		want  pipeline.ApprovalOutcome
	}{{s.A, pipeline.Unavailable}, {s.C, pipeline.Unavailable}, {s.B, pipeline.AllowedOnce}} {
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
	if _, err := svc.In(s.Preset).Answer(answer(pipeline.AllowedOnce)); err != nil {
		t.Fatal(err)
	}
	req := pipeline.ApprovalRequest{Agent: s.A, ToolName: "write"}
	if got, _ := svc.Request(context.Background(), req); got != pipeline.AllowedOnce {
		t.Fatalf("before end: %v", got)
	}
	s.Preset.End()
	if got, _ := svc.Request(context.Background(), req); got != pipeline.Unavailable {
		t.Fatalf("after end: %v, want unavailable (the answerer is gone)", got)
	}
	if _, err := svc.In(s.Preset).Answer(answer(pipeline.AllowedOnce)); err == nil {
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
	if _, err := svc.In(s.C.Scope()).PrependAnswer(grant); err != nil {
		t.Fatal(err)
	}
	if _, err := approval.SetSessionPolicy(s.C.Session, approval.Never); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: s.C, ToolName: "write"})
	if err != nil || got != pipeline.Rejected || asked {
		t.Fatalf("outcome %v, %v, answerer asked %v; want rejected without asking", got, err, asked)
	}
	if a := audits(t, s.C.Session); len(a) != 1 || a[0].decided["outcome"] != "rejected" {
		t.Fatalf("audit %+v", a)
	}
}
