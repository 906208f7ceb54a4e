package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
)

// TestConcurrentAgentsDoNotLeak runs many agents at once under one preset
// standing scope. Each registers, through its own scope, a pre-execute
// listener, a guard, a wrapper, a post-execute listener, a result observer,
// an approval answerer and (every third agent) a restriction, then makes
// calls while the others register, call and end their scopes. Every
// registration checks that it only ever sees its own agent's calls; every
// call's result shows that only its own agent's rules applied; after the
// scopes ended nothing scoped is left. Run it with -race.
func TestConcurrentAgentsDoNotLeak(t *testing.T) {
	const agents, rounds = 48, 12
	r := pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {}))
	svc, err := approval.New()
	if err != nil {
		t.Fatal(err)
	}
	r.SetApprover(svc)
	preset := pipeline.NewScope("agentPreset:race")
	for _, name := range []string{"read", "write", "ask"} {
		r.Register(pipeline.Tool{Name: name, Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(call.Agent().ID + " ran " + call.Name())}}, nil
		}})
	}
	// Global: "ask" asks; the global answerer (last in the chain) rejects, so
	// an ask only succeeds when the agent's own scoped answerer grants it.
	r.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		if call.Name() == "ask" {
			return pipeline.Ask("race"), nil
		}
		return next()
	})
	svc.Answer(func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
		return pipeline.Rejected, nil
	})
	globalBefore, _ := r.HookCounts()

	var leaks sync.Map // "<stage> of agent X saw agent Y" -> true
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < agents; i++ {
		i := i
		agent := &pipeline.Agent{ID: fmt.Sprintf("agent-%02d", i), Session: openTurnLog(t)}
		if _, err := agent.Scope().Bind(preset); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			runRaceAgent(t, r, svc, agent, i, rounds, &leaks)
		}()
	}
	close(start)
	waittest.Group(t, &wg, "the racing agents to finish")
	leaks.Range(func(k, _ any) bool {
		t.Error(k)
		return true
	})
	global, scoped := r.HookCounts()
	if scoped != 0 || global != globalBefore {
		t.Errorf("after every scope ended: %d scoped and %d global registrations, want 0 and %d", scoped, global, globalBefore)
	}
	probe := &pipeline.Agent{ID: "probe", Session: openTurnLog(t)}
	probe.Scope().Bind(preset)
	if res := r.Execute(pipeline.NewCall("p1", "ask", json.RawMessage(`{}`), probe, context.Background())); res.Text() != `Error: the user rejected tool "ask"` {
		t.Errorf("a fresh agent's ask: %q; want only the global answerer to be left", res.Text())
	}
}

func runRaceAgent(t *testing.T, r *pipeline.Registry, svc *approval.Service, agent *pipeline.Agent, i, rounds int, leaks *sync.Map) {
	check := func(stage string, other *pipeline.Agent) {
		if other != agent {
			id := "<agentless>"
			if other != nil {
				id = other.ID
			}
			leaks.Store(fmt.Sprintf("%s registered by %s saw a call of %s", stage, agent.ID, id), true)
		}
	}
	sc := r.In(agent.Scope())
	denies := i%2 == 0
	hides := i%3 == 0
	var observed atomic.Int64
	regs := []func() (func(), error){
		func() (func(), error) {
			return sc.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				check("pre-execute listener", call.Agent())
				return next()
			})
		},
		func() (func(), error) {
			return sc.AddGuard(func(ctx context.Context, call *pipeline.Call) (string, bool) {
				check("guard", call.Agent())
				return agent.ID + " denies writes", denies && call.Name() == "write"
			})
		},
		func() (func(), error) {
			return sc.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
				check("wrapper", call.Agent())
				return next(ctx)
			})
		},
		func() (func(), error) {
			return sc.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
				check("post-execute listener", call.Agent())
				return next()
			})
		},
		func() (func(), error) {
			return sc.OnResult(func(call *pipeline.Call, res pipeline.Result) {
				check("result observer", call.Agent())
				observed.Add(1)
			})
		},
		func() (func(), error) {
			return svc.In(agent.Scope()).PrependAnswer(func(ctx context.Context, req *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
				check("answerer", req.Agent)
				return pipeline.AllowedOnce, nil
			})
		},
	}
	if hides {
		regs = append(regs, func() (func(), error) { return sc.Restrict(pipeline.Filter{Deny: []string{"read"}}) })
	}
	for _, reg := range regs {
		if _, err := reg(); err != nil {
			t.Error(err)
			return
		}
	}
	want := map[string]string{
		"read":  agent.ID + " ran read",
		"write": agent.ID + " ran write",
		"ask":   agent.ID + " ran ask",
	}
	if denies {
		want["write"] = "Error: " + agent.ID + " denies writes"
	}
	if hides {
		want["read"] = `Error: unknown tool "read"`
	}
	calls := 0
	for n := 0; n < rounds; n++ {
		for _, tool := range []string{"read", "write", "ask"} {
			calls++
			res := r.Execute(pipeline.NewCall(fmt.Sprintf("%s-%d", tool, n), tool, json.RawMessage(`{}`), agent, context.Background()))
			if res.Text() != want[tool] {
				t.Errorf("%s %s round %d: %q, want %q", agent.ID, tool, n, res.Text(), want[tool])
			}
		}
	}
	if got := observed.Load(); got != int64(calls) {
		t.Errorf("%s observed %d results of its %d calls", agent.ID, got, calls)
	}
	agent.Scope().End()
	if n := agent.Scope().Registrations(); n != 0 {
		t.Errorf("%s still owns %d registrations after its scope ended", agent.ID, n)
	}
	if res := r.Execute(pipeline.NewCall("after", "read", json.RawMessage(`{}`), agent, context.Background())); !res.IsError {
		t.Errorf("%s called a tool after its scope ended: %q", agent.ID, res.Text())
	}
}
