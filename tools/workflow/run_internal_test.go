package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/subagent"
)

// oneShot is a delegation service whose every child ends with result and
// err (only Start is used: the other methods are the nil interface's).
type oneShot struct {
	subagent.Service
	result subagent.Result
	err    error
}

func (s oneShot) Start(context.Context, string, subagent.Request) (subagent.Run, error) {
	return oneShotRun{s}, nil
}

type oneShotRun struct{ s oneShot }

func (r oneShotRun) ID() string            { return "child-1" }
func (r oneShotRun) Done() <-chan struct{} { return nil }
func (r oneShotRun) Dispose() error        { return nil }
func (r oneShotRun) Result(context.Context) (subagent.Result, error) {
	return r.s.result, r.s.err
}

// runEvents runs the body's calls "start" and one "agent" for call, the
// child ending as svc says under ctx, and returns what agent() answered and
// the events the caller's log got ("type data" lines).
func runEvents(ctx context.Context, t *testing.T, svc oneShot, nested bool) (string, []string) {
	t.Helper()
	log := sessiontest.New(t, "11111111-2222-4333-8444-555555555555", "/ws")
	agent := &pipeline.Agent{ID: "root", Session: log}
	call := pipeline.NewCall("wf1", Name, json.RawMessage(`{}`), agent, context.Background())
	if nested {
		call = pipeline.NewSubCall(call, "wf2", Name, json.RawMessage(`{}`), context.Background())
	}
	r := newRunState(&tool{deps: Deps{Service: svc}}, call, "pair")
	r.runID = "run-1"
	if _, err := r.hostCall(ctx, 0, "start", nil); err != nil {
		t.Fatal(err)
	}
	answer, err := r.hostCall(ctx, 0, "agent", json.RawMessage(`{"prompt":"p","seq":1,"label":"w"}`))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Type+" "+string(e.Data))
	}
	return string(answer), got
}

// TestAgentEndOutcomes pins agent-end's outcome, one of completed, failed
// and cancelled (upstream's invariant refuses any other): a child that
// failed outright answers the body "error" with its message but is logged
// "failed", as is one that stopped short of completing.
func TestAgentEndOutcomes(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	completed := subagent.Result{Stop: delegation.StopCompleted, Output: []json.RawMessage{json.RawMessage(`{"type":"text","text":"done"}`)}}
	for _, tc := range []struct {
		name    string
		svc     oneShot
		ctx     context.Context
		answer  string
		outcome string
	}{
		{"completed", oneShot{result: completed}, context.Background(), `{"outcome":"completed","value":"done"}`, "completed"},
		{"failed outright", oneShot{err: errors.New("boom")}, context.Background(), `{"message":"boom","outcome":"error"}`, "failed"},
		{"stopped short", oneShot{result: subagent.Result{Stop: delegation.StopMaxTokens}}, context.Background(), `{"outcome":"failed"}`, "failed"},
		{"cancelled", oneShot{err: context.Canceled}, cancelled, `{"outcome":"cancelled"}`, "cancelled"},
	} {
		answer, evs := runEvents(tc.ctx, t, tc.svc, false)
		if answer != tc.answer {
			t.Errorf("%s: agent() answered %s, want %s", tc.name, answer, tc.answer)
		}
		want := []string{
			`tool-workflow/run-start {"runId":"run-1","name":"pair"}`,
			`tool-workflow/agent-start {"runId":"run-1","seq":1,"label":"w","childId":"child-1"}`,
			`tool-workflow/agent-end {"runId":"run-1","seq":1,"outcome":"` + tc.outcome + `"}`,
		}
		if strings.Join(evs, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: events\n%s\nwant\n%s", tc.name, strings.Join(evs, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestNestedWorkflowRecordsNoRun pins who records a run: a workflow called
// inside another call (run_code's sub-call) runs its agents but writes no
// run event in the caller's log.
func TestNestedWorkflowRecordsNoRun(t *testing.T) {
	completed := subagent.Result{Stop: delegation.StopCompleted, Output: []json.RawMessage{json.RawMessage(`{"type":"text","text":"done"}`)}}
	answer, evs := runEvents(context.Background(), t, oneShot{result: completed}, true)
	if answer != `{"outcome":"completed","value":"done"}` {
		t.Errorf("agent() answered %s", answer)
	}
	if len(evs) != 0 {
		t.Errorf("a nested workflow recorded %q", evs)
	}
}
