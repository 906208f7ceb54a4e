package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// TestArgumentCheckStage: the schema check is the body's first step, as
// upstream's defineTool execute: pre-execute, guards and the execute
// wrappers have all run when it refuses, a denial before it wins, the body
// never runs on bad arguments, and a tool without Parameters is not checked.
func TestArgumentCheckStage(t *testing.T) {
	var trace []string
	r := pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {}))
	schema := pipeline.ObjectSchema([]pipeline.Param{{Name: "x", Type: "string"}, {Name: "n", Type: "number"}}, []string{"x"})
	body := func(name string) func(context.Context, *pipeline.Call) (pipeline.Output, error) {
		return func(context.Context, *pipeline.Call) (pipeline.Output, error) {
			trace = append(trace, "body:"+name)
			return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock("ran")}}, nil
		}
	}
	for _, tl := range []pipeline.Tool{
		{Name: "typed", Parameters: schema, Run: body("typed")},
		{Name: "untyped", Run: body("untyped")},
	} {
		if _, err := r.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	r.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		trace = append(trace, "pre")
		if strings.Contains(string(call.Args()), "deny") {
			return pipeline.Deny("denied first"), nil
		}
		return next()
	})
	r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { trace = append(trace, "guard"); return "", false })
	r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
		trace = append(trace, "wrapper")
		return next(ctx)
	})
	for _, tc := range []struct{ tool, args, text, code, trace string }{
		{"typed", `{"n":"1"}`, `Error: invalid arguments: missing required property "x"; "n" must be a number`, "INVALID_ARGS", "pre guard wrapper"},
		{"typed", `{"x":"deny","n":"1"}`, "Error: denied first", "", "pre"},
		{"typed", `{"x":"ok","extra":true}`, "ran", "", "pre guard wrapper body:typed"},
		{"untyped", `{"n":"1"}`, "ran", "", "pre guard wrapper body:untyped"},
	} {
		trace = nil
		res := r.Execute(pipeline.NewCall("c", tc.tool, json.RawMessage(tc.args), nil, context.Background()))
		code := ""
		if res.Error != nil && res.Error.Info != nil {
			code = res.Error.Info.Code
		}
		if res.Text() != tc.text || code != tc.code || strings.Join(trace, " ") != tc.trace {
			t.Errorf("%s %s: %q (code %q), trace %q; want %q (code %q), trace %q", tc.tool, tc.args, res.Text(), code, trace, tc.text, tc.code, tc.trace)
		}
	}
}

// TestRegisterRefusesAnUnsupportedSchema: a parameter schema outside the
// enforced subset cannot be registered (upstream's defineTool throws).
func TestRegisterRefusesAnUnsupportedSchema(t *testing.T) {
	r := pipeline.NewRegistry()
	_, err := r.Register(pipeline.Tool{Name: "t", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","minimum":1}}}`),
		Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) { return pipeline.Output{}, nil }})
	if err == nil || !strings.Contains(err.Error(), `pipeline: tool "t": unsupported JSON schema: schema.properties.n.minimum is not a supported keyword`) {
		t.Errorf("err = %v", err)
	}
}

// TestRunsBeside: only a concurrency-safe tool whose arguments pass its
// schema runs in a pool; a call its schema refuses runs alone, as upstream's
// classifier (defineTool's wrapper) makes it exclusive.
func TestRunsBeside(t *testing.T) {
	schema := pipeline.ObjectSchema([]pipeline.Param{{Name: "x", Type: "string"}, {Name: "b", Type: "boolean"}}, []string{"x"})
	safe := pipeline.Tool{Name: "safe", Parameters: schema, ConcurrencySafe: true}
	for _, tc := range []struct {
		name string
		tool pipeline.Tool
		args string
		want bool
	}{
		{"valid", safe, `{"x":"a"}`, true},
		{"valid with an unknown key", safe, `{"x":"a","extra":1}`, true},
		{"missing required", safe, `{}`, false},
		{"wrong type", safe, `{"x":"a","b":"no"}`, false},
		{"not JSON", safe, `{"x":`, false},
		{"exclusive tool", pipeline.Tool{Name: "excl", Parameters: schema}, `{"x":"a"}`, false},
		{"no schema", pipeline.Tool{Name: "free", ConcurrencySafe: true}, `{"anything":1}`, true},
	} {
		if got := pipeline.RunsBeside(tc.tool, json.RawMessage(tc.args)); got != tc.want {
			t.Errorf("%s: RunsBeside(%s) = %v, want %v", tc.name, tc.args, got, tc.want)
		}
	}
}
