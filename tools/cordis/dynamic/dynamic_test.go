package dynamic

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/cordis"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// TestCheck: a definition registers only as the checks allow; each
// refusal names its field.
func TestCheck(t *testing.T) {
	ok := func(d Definition) Definition { return d }
	base := Definition{Name: "snapshot_double", Description: "Double.", Parameters: json.RawMessage(`{"value":{"type":"number","required":true}}`), Output: json.RawMessage(`{"type":"number"}`), Execute: true, Render: true}
	params := func(n int) json.RawMessage {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("p%d", i)] = map[string]string{"type": "string"}
		}
		b, _ := json.Marshal(m)
		return b
	}
	enumOf := func(n int) json.RawMessage {
		e := make([]string, n)
		for i := range e {
			e[i] = fmt.Sprint(i)
		}
		b, _ := json.Marshal(map[string]any{"v": map[string]any{"type": "string", "enum": e}})
		return b
	}
	with := func(f func(*Definition)) Definition { d := base; f(&d); return d }
	tests := []struct {
		name       string
		def        Definition
		wantErr    string
		wantParams string
	}{
		{"the recording's", ok(base), "", `{"properties":{"value":{"type":"number"}},"required":["value"],"type":"object"}`},
		{"no parameters", with(func(d *Definition) { d.Parameters = json.RawMessage(`null`) }), "", `{"properties":{},"type":"object"}`},
		{"optional, described, enum", with(func(d *Definition) {
			d.Parameters = json.RawMessage(`{"mode":{"type":"string","description":"m","enum":["a","b"]}}`)
		}), "", `{"properties":{"mode":{"description":"m","enum":["a","b"],"type":"string"}},"type":"object"}`},
		{"a 64-character name", with(func(d *Definition) { d.Name = strings.Repeat("a", 64) }), "", ""},
		{"a 65-character name", with(func(d *Definition) { d.Name = strings.Repeat("a", 65) }), "harness.defineTool name:", ""},
		{"a name with a dot", with(func(d *Definition) { d.Name = "a.b" }), "harness.defineTool name:", ""},
		{"a name starting with a digit", with(func(d *Definition) { d.Name = "1a" }), "harness.defineTool name:", ""},
		{"no description", with(func(d *Definition) { d.Description = "" }), "harness.defineTool description:", ""},
		{"parameters not an object", with(func(d *Definition) { d.Parameters = json.RawMessage(`[1]`) }), "harness.defineTool parameters:", ""},
		{"an object parameter", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{"type":"object"}}`) }), "harness.defineTool parameters.v: type:", ""},
		{"a missing type", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{}}`) }), "harness.defineTool parameters.v: type:", ""},
		{"required false", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{"type":"number","required":false}}`) }), "harness.defineTool parameters.v: required:", ""},
		{"an unknown key", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{"type":"number","default":1}}`) }), `harness.defineTool parameters.v: key "default"`, ""},
		{"an empty enum", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{"type":"string","enum":[]}}`) }), "harness.defineTool parameters.v: enum:", ""},
		{"a bad parameter name", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"a b":{"type":"number"}}`) }), "harness.defineTool parameters.a b:", ""},
		{"an output of another type", with(func(d *Definition) { d.Output = json.RawMessage(`{"type":"object"}`) }), "harness.defineTool output.schema.type:", ""},
		{"an output with more keys", with(func(d *Definition) { d.Output = json.RawMessage(`{"type":"number","minimum":0}`) }), "harness.defineTool output.schema:", ""},
		{"no output schema", with(func(d *Definition) { d.Output = nil }), "harness.defineTool output.schema: missing", ""},
		{"no render", with(func(d *Definition) { d.Render = false }), "harness.defineTool output.render:", ""},
		{"no execute", with(func(d *Definition) { d.Execute = false }), "harness.defineTool execute:", ""},
		{"a description at the bound", with(func(d *Definition) { d.Description = strings.Repeat("d", MaxDescriptionBytes) }), "", ""},
		{"a description over the bound", with(func(d *Definition) { d.Description = strings.Repeat("d", MaxDescriptionBytes+1) }), "harness.defineTool description: 4097 bytes", ""},
		{"a parameter's description over the bound", with(func(d *Definition) {
			d.Parameters, _ = json.Marshal(map[string]any{"v": map[string]string{"type": "string", "description": strings.Repeat("d", MaxDescriptionBytes+1)}})
		}), "harness.defineTool parameters.v: description: 4097 bytes", ""},
		{"parameters at the bound", with(func(d *Definition) { d.Parameters = params(MaxParameters) }), "", ""},
		{"parameters over the bound", with(func(d *Definition) { d.Parameters = params(MaxParameters + 1) }), "harness.defineTool parameters: 65 parameters", ""},
		{"an enum at the bound", with(func(d *Definition) { d.Parameters = enumOf(MaxEnum) }), "", ""},
		{"an enum over the bound", with(func(d *Definition) { d.Parameters = enumOf(MaxEnum + 1) }), "harness.defineTool parameters.v: enum: 257 values", ""},
		{"an enum value of another type", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{"type":"string","enum":["a",1]}}`) }), "harness.defineTool parameters.v: enum[1]: want a string", ""},
		{"an enum value nested", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{"type":"string","enum":[["a"]]}}`) }), "harness.defineTool parameters.v: enum[0]: want a string", ""},
		{"an integer enum with a fraction", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{"type":"integer","enum":[1,1.5]}}`) }), "harness.defineTool parameters.v: enum[1]: want an integer", ""},
		{"an integer enum", with(func(d *Definition) { d.Parameters = json.RawMessage(`{"v":{"type":"integer","enum":[1,2e0]}}`) }), "", `{"properties":{"v":{"enum":[1,2e0],"type":"integer"}},"type":"object"}`},
		{"deeply nested parameters", with(func(d *Definition) {
			d.Parameters = json.RawMessage(`{"v":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`)
		}), "harness.defineTool parameters: want an object of property specs", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params, _, err := Check(tc.def)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Check = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("Check = %v; want an error starting %q", err, tc.wantErr)
			case tc.wantParams != "" && string(params) != tc.wantParams:
				t.Fatalf("parameters = %s; want %s", params, tc.wantParams)
			}
		})
	}
}

// snapshotDouble is the advanced recording's package host code.
const snapshotDouble = `return (ctx) => {
  harness.registerTool(ctx, harness.defineTool({
    name: 'snapshot_double',
    description: 'Double a number for executable snapshot verification.',
    parameters: { value: { type: 'number', required: true } },
    output: {
      schema: { type: 'number' },
      render(_args, value) {
        return [{ type: 'text', text: String(value) }]
      }
    },
    async execute(args) {
      return args.value * 2
    }
  }))
}
`

// fixture is a registry with the four lifecycle tools wrapped by a Host,
// each inner body answering as a served one would (cordis_define's meta
// the ids its arguments' plugin.pluginId and packageId name, else snap-1
// and pkg-1), and a "bash" tool that counts its calls.
type fixture struct {
	reg   *pipeline.Registry
	host  *Host
	n     int
	bashN atomic.Int32
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the dynamic tools run in run_code's Node runtime")
	}
	rt, err := noderuntime.New(noderuntime.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{reg: pipeline.NewRegistry()}
	f.host = &Host{Runner: Runner{Runtime: rt, Policy: func(*pipeline.Call) (sandbox.Policy, error) {
		return sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: t.TempDir()}, nil
	}}, Register: f.reg.Register, Taken: func() []string {
		return []string{"bash", "read", cordis.DefineName, cordis.RunName, cordis.StopName, cordis.UndefineName}
	}}
	for _, name := range []string{cordis.DefineName, cordis.RunName, cordis.StopName, cordis.UndefineName} {
		tool := toolreg.Tool{Def: pipeline.Tool{Name: name, Parameters: json.RawMessage(`{"type":"object"}`),
			Run: func(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
				var m json.RawMessage
				if name == cordis.DefineName {
					m = defineMeta(call.Args())
				}
				return pipeline.Output{Content: []pipeline.Block{{Type: "text", Text: "ok"}}, Meta: m}, nil
			}}}
		if _, err := f.reg.Register(f.host.Wrap(tool).Def); err != nil {
			t.Fatal(err)
		}
	}
	bash := pipeline.Tool{Name: "bash", Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) {
		f.bashN.Add(1)
		return pipeline.Output{Content: []pipeline.Block{{Type: "text", Text: "the real bash"}}}, nil
	}}
	if _, err := f.reg.Register(bash); err != nil {
		t.Fatal(err)
	}
	return f
}

// defineMeta is the fixture's cordis_define result meta.
func defineMeta(args json.RawMessage) json.RawMessage {
	var a struct {
		Plugin struct {
			PluginID string `json:"pluginId"`
		} `json:"plugin"`
		PackageID string `json:"packageId"`
	}
	_ = json.Unmarshal(args, &a)
	m := map[string]string{"pluginId": "snap-1", "packageId": "pkg-1"}
	if a.Plugin.PluginID != "" {
		m["pluginId"] = a.Plugin.PluginID
	}
	if a.PackageID != "" {
		m["packageId"] = a.PackageID
	}
	b, _ := json.Marshal(m)
	return b
}

// call executes one call.
func (f *fixture) call(name, args string) pipeline.Result {
	f.n++
	return f.reg.Execute(pipeline.NewCall(fmt.Sprintf("c%d", f.n), name, json.RawMessage(args), &pipeline.Agent{ID: "root"}, nil))
}

// define defines host as plugin's package id (snap-1/pkg-1 when empty).
func (f *fixture) define(t *testing.T, host string) {
	t.Helper()
	if r := f.defineAs("", "", host); r.IsError {
		t.Fatalf("define: %+v", r.Content)
	}
}

func (f *fixture) defineAs(plugin, id, host string) pipeline.Result {
	args, _ := json.Marshal(map[string]any{"plugin": map[string]string{"kind": "existing", "pluginId": plugin}, "packageId": id, "name": "n", "purpose": "p", "code": map[string]string{"host": host}})
	return f.call(cordis.DefineName, string(args))
}

// runOf is cordis_run's arguments for plugin's package id.
func runOf(plugin, id string) string {
	return fmt.Sprintf(`{"pluginId":%q,"packageId":%q,"mode":"run"}`, plugin, id)
}

const runArgs = `{"pluginId":"snap-1","packageId":"pkg-1","mode":"run"}`

// register is host code's registration of a tool named name with params
// (the DSL, as JavaScript), whose execute returns the JavaScript
// expression result and whose output is a number rendered as text.
func register(name, params, result string) string {
	return `harness.registerTool(ctx, harness.defineTool({ name: '` + name + `', description: 'd', parameters: ` + params +
		`, output: { schema: { type: 'number' }, render(_a, v) { return [{ type: 'text', text: String(v) }] } }, async execute(args) { return ` + result + ` } }));`
}

// TestRunRegistersStopAndUndefineUnregister: the recording's package
// registers snapshot_double on cordis_run, its call runs execute and
// render (21 doubled, rendered "42"), and cordis_undefine removes it.
func TestRunRegistersStopAndUndefineUnregister(t *testing.T) {
	f := newFixture(t)
	f.define(t, snapshotDouble)
	if _, ok := f.reg.Lookup("snapshot_double"); ok {
		t.Fatal("registered on define; want on run")
	}
	if r := f.call(cordis.RunName, runArgs); r.IsError {
		t.Fatalf("run: %+v", r.Content)
	}
	r := f.call("snapshot_double", `{"value":21}`)
	if r.IsError || len(r.Content) != 1 || r.Content[0].Text != "42" || string(r.Value) != "42" {
		t.Fatalf("snapshot_double = %+v (value %s)", r.Content, r.Value)
	}
	if r := f.call("snapshot_double", `{"value":"x"}`); !r.IsError {
		t.Fatalf("a string value passed the schema check: %+v", r.Content)
	}
	if r := f.call(cordis.UndefineName, `{"pluginId":"snap-1"}`); r.IsError {
		t.Fatalf("undefine: %+v", r.Content)
	}
	if _, ok := f.reg.Lookup("snapshot_double"); ok {
		t.Fatal("still registered after cordis_undefine")
	}
}

// TestABadPackageRegistersNothing: a definition the checks refuse, a
// second registration of one name, a name already taken, a registration
// without defineTool, host code that throws or reaches for Node's
// require: cordis_run fails naming why, and nothing registers.
func TestABadPackageRegistersNothing(t *testing.T) {
	reg := func(name, params string) string { return register(name, params, "1") }
	tests := []struct{ name, host, want string }{
		{"a bad definition after a good one", `return (ctx) => { ` + reg("good_one", `{}`) + reg("bad_one", `{ v: { type: 'object' } }`) + ` }`, "registration 2: harness.defineTool parameters.v"},
		{"one name twice", `return (ctx) => { ` + reg("twice", `{}`) + reg("twice", `{}`) + ` }`, `"twice" is registered twice`},
		{"a name taken", `return (ctx) => { ` + reg("good_one", `{}`) + reg("cordis_run", `{}`) + ` }`, `registration 2: harness.defineTool name: "cordis_run" is taken`},
		{"a name the registry holds", `return (ctx) => { ` + reg("good_one", `{}`) + reg("late_tool", `{}`) + ` }`, `register late_tool: pipeline: tool "late_tool" is already registered`},
		{"one name twice in two cases", `return (ctx) => { ` + reg("twice", `{}`) + reg("TWICE", `{}`) + ` }`, `"TWICE" is registered twice (as "twice" by registration 1)`},
		{"no output", `return (ctx) => { harness.registerTool(ctx, harness.defineTool({ name: 'bad_one', description: 'd', async execute() { return 1 } })) }`, "harness.defineTool output.schema: missing"},
		{"without defineTool", `return (ctx) => { harness.registerTool(ctx, { name: 'x' }) }`, "must use a tool returned by harness.defineTool"},
		{"host code that throws", `throw new Error('boom')`, "boom"},
		{"require", `return (ctx) => { require('fs') }`, "require is not defined"},
		{"no plugin", `return 42`, "returned no Cordis Plugin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if _, err := f.reg.Register(pipeline.Tool{Name: "late_tool", Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) { return pipeline.Output{}, nil }}); err != nil {
				t.Fatal(err)
			}
			f.define(t, tc.host)
			r := f.call(cordis.RunName, runArgs)
			if !r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, tc.want) {
				t.Fatalf("run = %+v; want an error naming %q", r.Content, tc.want)
			}
			for _, name := range []string{"good_one", "bad_one", "twice"} {
				if _, ok := f.reg.Lookup(name); ok {
					t.Fatalf("%s registered", name)
				}
			}
		})
	}
}

// TestRunOfAPackageNotDefinedHereRegistersNothing: cordis_run of a
// package this session did not define (a served body whose package the
// recording defined elsewhere) keeps the body's result and registers no
// tool; the host code of a package defined later still registers.
func TestRunOfAPackageNotDefinedHereRegistersNothing(t *testing.T) {
	f := newFixture(t)
	if r := f.call(cordis.RunName, runArgs); r.IsError || r.Content[0].Text != "ok" {
		t.Fatalf("run = %+v, want the body's result", r.Content)
	}
	if r := f.call("snapshot_double", `{"value":21}`); !r.IsError {
		t.Fatalf("snapshot_double ran without a definition: %+v", r.Content)
	}
	f.define(t, snapshotDouble)
	if r := f.call(cordis.RunName, runArgs); r.IsError {
		t.Fatalf("run after define = %+v", r.Content)
	}
	if r := f.call("snapshot_double", `{"value":21}`); r.IsError || r.Content[0].Text != "42" {
		t.Fatalf("snapshot_double = %+v, want 42", r.Content)
	}
}
