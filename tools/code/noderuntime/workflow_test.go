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

// TestWorkflowSchemaSubset: agent()'s schema is checked against the
// subset structured output takes before any child starts, every violation
// in upstream's walk order (a node's keywords, its annotations, its type,
// then its children, the object's required and additionalProperties after
// its properties), then the object root; a schema inside the subset goes
// to the host. Planted bugs caught: no check (the child starts), a
// violation missing or out of order, the root checked on a tree with
// violations, -0 in an annotation accepted.
func TestWorkflowSchemaSubset(t *testing.T) {
	r := newRuntime(t, Config{})
	const prefix = "UNSUPPORTED_SCHEMA: agent() schema is outside the supported subset — unsupported JSON schema: "
	for _, tc := range []struct{ schema, want string }{
		{`{type: 'object', properties: {a: {type: 'string'}}, required: ['a'], additionalProperties: false, title: 't'}`, ""},
		{`{type: 'object', properties: {n: {type: 'number', minimum: 0}}}`, "schema.properties.n.minimum is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)"},
		{`{type: 'string'}`, `schema.type must be "object" (structured output is object-rooted)`},
		{`[]`, "schema must be a schema object"},
		{`{type: ['object'], pattern: 'x', properties: {a: 1}}`, "schema.pattern is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations); schema.type must be a single type string (type arrays are not supported)"},
		{`{oneOf: [{type: 'string'}], items: {}}`, "schema.oneOf must be an array of at least two schemas; schema.items is not supported beside oneOf"},
		{`{type: 'object', required: 'a', properties: 7}`, "schema.properties must be an object of schemas; schema.required must be an array of strings"},
		{`{type: 'object', required: ['b'], properties: {a: {type: 'integer', const: 1.5}}, additionalProperties: 'no'}`, `schema.properties.a.const must be a integer value; schema.required names "b" which is not in properties; schema.additionalProperties must be a boolean`},
		{`{type: 'object', description: 4, default: -0, examples: [[1, -0]]}`, "schema.default annotation must be lossless JSON data; schema.examples annotation must be lossless JSON data; schema.description must be a string"},
		{`{type: 'object', properties: {'2': {type: 'x'}, '1': {format: 'e', type: 'string', enum: ['x'], const: 'y'}}}`, "schema.properties.1.format is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations); schema.properties.1.const must be one of schema.properties.1.enum when both are declared; schema.properties.2.type must be one of object/array/string/number/integer/boolean/null"},
	} {
		body := "try {\n  return await agent('p', {schema: " + tc.schema + "});\n} catch (e) {\n  return e.code + ': ' + e.message;\n}"
		res, agents, _ := workflowRun(t, r, body, completed)
		wanted := prefix + tc.want
		if tc.want == "" {
			wanted = "done: p"
		}
		var v struct{ Value string }
		json.Unmarshal(res.Value, &v)
		got := v.Value
		if got != wanted || (tc.want == "") != (len(agents) == 1) {
			t.Errorf("schema %s\n got %q (%d agents, %s)\nwant %q", tc.schema, got, len(agents), failureOf(res), wanted)
		}
	}
}

// TestWorkflowThrownValues: a body's thrown value is rendered as
// upstream's engine renders any value, an Error or not: its stack when a
// non-empty string, else its message when one, else String(value), a
// throwing read as a fixed label; and a return value holding -0 completes
// with the lossy mark (the tool fails it), one without does not; a return
// value that is not plain JSON fails with upstream's WorkflowError stack.
// Planted bugs caught: a non-Error printed as String ("[object Object]"),
// the message preferred to the stack, the -0 written as 0 unmarked, the
// unserializable value's text without "WorkflowError: ".
func TestWorkflowThrownValues(t *testing.T) {
	r := newRuntime(t, Config{})
	for _, tc := range []struct{ body, failure string }{
		{`throw { message: "boom" }`, "exception: boom"},
		{`throw { stack: "STACK", message: "m" }`, "exception: STACK"},
		{`throw { stack: "", message: "m" }`, "exception: m"},
		{`throw { message: "" }`, "exception: [object Object]"},
		{`throw { message: 7 }`, "exception: [object Object]"},
		{`throw "text"`, "exception: text"},
		{`throw null`, "exception: null"},
		{`throw { get stack() { throw new Error("no") } }`, "exception: [unrenderable thrown value]"},
		{`throw { toString() { throw 1 } }`, "exception: [unrenderable thrown value]"},
	} {
		res, _, _ := workflowRun(t, r, tc.body, completed)
		if got := failureOf(res); got != tc.failure {
			t.Errorf("%s: failure %q, want %q", tc.body, got, tc.failure)
		}
	}
	// A return value that is not plain JSON is upstream's WorkflowError
	// (RESULT_UNSERIALIZABLE), rendered as any thrown value: its stack,
	// whose first line names the error.
	for _, tc := range []struct{ body, path string }{
		{`return { f: () => 1 }`, "workflow result.f: functions are not plain JSON data"},
		{`return [1, Infinity]`, "workflow result[1]: non-finite numbers are not JSON data"},
		{`return { get x() { throw { message: "inner" } } }`, "workflow result: reading the value threw: inner"},
	} {
		res, _, _ := workflowRun(t, r, tc.body, completed)
		first := "exception: WorkflowError: the workflow's return value is not plain JSON data — " + tc.path + ". Return only JSON-serializable objects/arrays/scalars.\n    at "
		if got := failureOf(res); !strings.HasPrefix(got, first) {
			t.Errorf("%s: failure %q, want it to open %q", tc.body, got, first)
		}
	}
	for _, tc := range []struct{ body, value string }{
		{`return { a: [1, -0] }`, `{"value":{"a":[1,0]},"agentsStarted":0,"lossy":true}`},
		{`return -0`, `{"value":0,"agentsStarted":0,"lossy":true}`},
		{`return { b: 1, a: 0 }`, `{"value":{"b":1,"a":0},"agentsStarted":0}`},
		{`return`, `{"value":null,"agentsStarted":0}`},
	} {
		res, _, _ := workflowRun(t, r, tc.body, completed)
		if string(res.Value) != tc.value || failureOf(res) != "" {
			t.Errorf("%s: value %s (%s), want %s", tc.body, res.Value, failureOf(res), tc.value)
		}
	}
}
