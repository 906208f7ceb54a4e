package noderuntime

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// workflowRun runs body in workflow mode (maxConcurrentAgents 2); each
// agent() is answered by answer and recorded.
func workflowRun(t *testing.T, r *Runtime, body string, answer func(req map[string]any) string) (Result, []map[string]any, []string) {
	t.Helper()
	var mu sync.Mutex
	var agents []map[string]any
	var calls []string
	req := unconfined(t, body)
	req.Workflow = &Workflow{Name: "w", Args: json.RawMessage(`{"n":2}`),
		Limits: WorkflowLimits{MaxConcurrentAgents: 2, MaxTotalAgents: 3, MaxItemsPerCall: 4, SyncTimeoutMs: 2000}}
	req.Call = func(ctx context.Context, _ int64, name string, args json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, name)
		if name != "agent" {
			return json.RawMessage(`{}`), nil
		}
		var m map[string]any
		json.Unmarshal(args, &m)
		agents = append(agents, m)
		return json.RawMessage(answer(m)), nil
	}
	return mustRun(t, r, req), agents, calls
}

func completed(req map[string]any) string {
	b, _ := json.Marshal(map[string]any{"outcome": "completed", "value": "done: " + req["prompt"].(string)})
	return string(b)
}

// TestWorkflowMode: the body sees only the six hooks (no require, process
// or timers); agent() hands the host upstream's request (seq, the default
// label cut at 48, the current phase, readOnly passed on) and resolves to
// the child's text, null for a failed child; the result is {value,
// agentsStarted}; the options and caps are checked as upstream's engine
// checks them, and a body that does not parse fails before the run starts.
// Planted bugs caught: a Node global leaking into the context, readOnly
// dropped from the request, the caps not applied, a parse failure reported
// after start.
func TestWorkflowMode(t *testing.T) {
	r := newRuntime(t, Config{})
	res, _, calls := workflowRun(t, r, "return [typeof require, typeof process, typeof setTimeout, typeof agent, typeof pipeline, args.n];", completed)
	if failureOf(res) != "" || string(res.Value) != `{"value":["undefined","undefined","undefined","function","function",2],"agentsStarted":0}` {
		t.Errorf("the context: %s %s", res.Value, failureOf(res))
	}
	if !reflect.DeepEqual(calls, []string{"start"}) {
		t.Errorf("host calls %v", calls)
	}

	long := strings.Repeat("x", 60)
	res, agents, _ := workflowRun(t, r, `phase("p1");
const a = await agent("`+long+`\nsecond line");
const b = await agent("fails", {label: "L", phase: "p2", readOnly: true});
return [a, b];`, func(req map[string]any) string {
		if req["prompt"] == "fails" {
			return `{"outcome":"failed"}`
		}
		return completed(req)
	})
	if want := `{"value":["done: ` + long + `\nsecond line",null],"agentsStarted":2}`; string(res.Value) != want {
		t.Errorf("value %s\nwant %s (%s)", res.Value, want, failureOf(res))
	}
	wantAgents := []map[string]any{
		{"prompt": long + "\nsecond line", "seq": float64(1), "label": strings.Repeat("x", 47) + "…", "phase": "p1"},
		{"prompt": "fails", "seq": float64(2), "label": "L", "phase": "p2", "readOnly": true},
	}
	if !reflect.DeepEqual(agents, wantAgents) {
		t.Errorf("agent requests\n got %v\nwant %v", agents, wantAgents)
	}

	for _, tc := range []struct{ body, failure string }{
		{`await agent("p", {effort: "high"});`, `agent() option "effort" is deferred and not supported by this engine (supported: label, phase, schema, provider, model)`},
		{`await agent("p", {color: 1});`, `agent() option "color" is not recognized (supported: label, phase, schema, provider, model)`},
		{`await agent("p", {readOnly: "yes"});`, `agent() option "readOnly" must be a boolean`},
		{`await parallel([1,2,3,4,5].map(i => () => agent("p" + i)));`, `parallel() received 5 items — over the per-call cap (4); split the work or raise maxItemsPerCall in the engine config`},
		{`for (let i = 0; i < 4; i++) await agent("p" + i);`, `this run reached its total agent cap (3) — a runaway-loop backstop; raise the applicable maxTotalAgents limit if the scale is intentional`},
	} {
		res, _, _ := workflowRun(t, r, tc.body, completed)
		if got := failureOf(res); got != "exception: WorkflowError: "+tc.failure && !strings.Contains(got, tc.failure) {
			t.Errorf("%s\n got %q\nwant it to carry %q", tc.body, got, tc.failure)
		}
	}
	res, _, calls = workflowRun(t, r, "return (", completed)
	if res.Error == nil || res.Error.Kind != KindParse || !strings.HasPrefix(res.Error.Message, "workflow script does not parse: SyntaxError") || len(calls) != 0 {
		t.Errorf("a body that does not parse: %+v, host calls %v", res.Error, calls)
	}
}
