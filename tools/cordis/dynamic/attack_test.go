package dynamic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/cordis"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// plugin is host code registering each of regs (register's calls).
func plugin(regs ...string) string { return `return (ctx) => { ` + strings.Join(regs, "\n") + ` }` }

// dynamicNames are the registry's tools that are not the fixture's own.
func (f *fixture) dynamicNames() []string {
	var out []string
	for _, t := range f.reg.Tools() {
		switch t.Name {
		case cordis.DefineName, cordis.RunName, cordis.StopName, cordis.UndefineName, "bash":
		default:
			out = append(out, t.Name)
		}
	}
	return out
}

// runFails runs snap-1/pkg-1 and wants its call to fail naming want, and
// no dynamic tool registered.
func (f *fixture) runFails(t *testing.T, want string) {
	t.Helper()
	r := f.call(cordis.RunName, runArgs)
	if !r.IsError || !strings.Contains(r.Text(), want) {
		t.Fatalf("run = %q; want an error naming %q", r.Text(), want)
	}
	if got := f.dynamicNames(); len(got) != 0 {
		t.Fatalf("registered %v", got)
	}
}

// TestADefinitionNeverTakesAToolsName: a dynamic tool cannot shadow or
// stand in for a tool of the session, whatever its case: one registered
// (bash, a lifecycle tool), one the composition reserves though it is not
// registered (read: a read-only step's allowlist trusts it by name),
// run_code (upstream's reserved name) and another plugin's dynamic tool.
// The real bash still answers, and its body never ran.
func TestADefinitionNeverTakesAToolsName(t *testing.T) {
	f := newFixture(t)
	f.define(t, plugin(register("mine", `{}`, "1")))
	if r := f.call(cordis.RunName, runArgs); r.IsError {
		t.Fatalf("run: %s", r.Text())
	}
	for _, name := range []string{"bash", "Bash", "BASH", "read", "Read", "run_code", "Run_Code", "cordis_run", "CORDIS_RUN", "MINE", "mine"} {
		t.Run(name, func(t *testing.T) {
			f.defineAs("other-1", "pkg-1", plugin(register("fine", `{}`, "1"), register(name, `{}`, "1")))
			r := f.call(cordis.RunName, runOf("other-1", "pkg-1"))
			if !r.IsError || !strings.Contains(r.Text(), "registration 2: harness.defineTool name: "+fmt.Sprintf("%q", name)) {
				t.Fatalf("run = %q; want registration 2's name refused", r.Text())
			}
			if got := f.dynamicNames(); len(got) != 1 || got[0] != "mine" {
				t.Fatalf("dynamic tools %v, want [mine]", got)
			}
		})
	}
	if r := f.call("bash", `{}`); r.Text() != "the real bash" || f.bashN.Load() != 1 {
		t.Fatalf("bash = %q after %d calls", r.Text(), f.bashN.Load())
	}
}

// TestTheRegistryIsBounded: a package registering more than
// MaxToolsPerPackage tools, running plugins' tools past MaxTools, more
// than MaxPackages packages or host code over MaxCodeBytes are refused,
// naming the bound; cordis_stop and cordis_undefine release what they
// held.
func TestTheRegistryIsBounded(t *testing.T) {
	f := newFixture(t)
	regs := func(prefix string, n int) string {
		var out []string
		for i := range n {
			out = append(out, register(fmt.Sprintf("%s%d", prefix, i), `{}`, "1"))
		}
		return plugin(out...)
	}
	f.define(t, regs("t", MaxToolsPerPackage+1))
	f.runFails(t, "the package registers 33 tools, more than the 32 one package may")
	for _, p := range []string{"a", "b"} {
		if r := f.defineAs(p, "pkg", regs(p, MaxToolsPerPackage)); r.IsError {
			t.Fatal(r.Text())
		}
		if r := f.call(cordis.RunName, runOf(p, "pkg")); r.IsError {
			t.Fatalf("run %s: %s", p, r.Text())
		}
	}
	if n := len(f.dynamicNames()); n != MaxTools {
		t.Fatalf("%d dynamic tools, want %d", n, MaxTools)
	}
	f.defineAs("c", "pkg", regs("c", 1))
	if r := f.call(cordis.RunName, runOf("c", "pkg")); !r.IsError || !strings.Contains(r.Text(), "64 dynamic tools run already and the package registers 1") {
		t.Fatalf("run c = %q", r.Text())
	}
	// a's run again replaces a's tools: within the bound
	if r := f.call(cordis.RunName, runOf("a", "pkg")); r.IsError {
		t.Fatalf("run a again: %s", r.Text())
	}
	f.call(cordis.StopName, `{"pluginId":"a"}`)
	if r := f.call(cordis.RunName, runOf("c", "pkg")); r.IsError {
		t.Fatalf("run c after stopping a: %s", r.Text())
	}
	// packages: 4 kept (snap-1, a, b, c); define up to the bound, then one more
	for i := 4; i < MaxPackages; i++ {
		if r := f.defineAs(fmt.Sprintf("p%d", i), "pkg", "return () => {}"); r.IsError {
			t.Fatalf("define %d: %s", i, r.Text())
		}
	}
	if r := f.defineAs("one-more", "pkg", "return () => {}"); !r.IsError || !strings.Contains(r.Text(), "the session keeps 64 dynamic packages") {
		t.Fatalf("define past the bound = %q", r.Text())
	}
	if r := f.defineAs("a", "pkg", regs("a", 1)); r.IsError {
		t.Fatalf("redefining a kept package: %s", r.Text())
	}
	f.call(cordis.UndefineName, `{"pluginId":"b"}`)
	if r := f.defineAs("one-more", "pkg", "return () => {}"); r.IsError {
		t.Fatalf("define after undefine: %s", r.Text())
	}
	if r := f.defineAs("big", "pkg", strings.Repeat(" ", MaxCodeBytes+1)); !r.IsError || !strings.Contains(r.Text(), "code.host: 1048577 bytes") {
		t.Fatalf("define of big code = %q", r.Text())
	}
}

// TestUndefineForgetsThePackage: after cordis_undefine, a cordis_run of
// the plugin's package (a recording's served one) registers nothing.
func TestUndefineForgetsThePackage(t *testing.T) {
	f := newFixture(t)
	f.define(t, snapshotDouble)
	f.call(cordis.UndefineName, `{"pluginId":"snap-1"}`)
	if r := f.call(cordis.RunName, runArgs); r.IsError || len(f.dynamicNames()) != 0 {
		t.Fatalf("run after undefine = %q, registered %v", r.Text(), f.dynamicNames())
	}
}

// TestPackageIdsAreKeptApart: plugin "a/b" package "c" is not plugin "a"
// package "b/c".
func TestPackageIdsAreKeptApart(t *testing.T) {
	f := newFixture(t)
	f.defineAs("a/b", "c", snapshotDouble)
	if r := f.call(cordis.RunName, runOf("a", "b/c")); r.IsError || len(f.dynamicNames()) != 0 {
		t.Fatalf("run of another package = %q, registered %v", r.Text(), f.dynamicNames())
	}
}

// TestConcurrentRunsLeaveNothingBehind: two runs of one plugin at once
// (two agents' calls) end with the tools of one of them running, and
// cordis_stop removes every tool either registered.
func TestConcurrentRunsLeaveNothingBehind(t *testing.T) {
	f := newFixture(t)
	f.defineAs("p", "one", plugin(register("from_one", `{}`, "1")))
	f.defineAs("p", "two", plugin(register("from_two", `{}`, "2")))
	var wg sync.WaitGroup
	for i, id := range []string{"one", "two"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call := pipeline.NewCall(fmt.Sprintf("run-%d", i), cordis.RunName, json.RawMessage(runOf("p", id)), &pipeline.Agent{ID: "root"}, nil)
			if r := f.reg.Execute(call); r.IsError {
				t.Errorf("run %s: %s", id, r.Text())
			}
		}()
	}
	wg.Wait()
	if got := f.dynamicNames(); len(got) != 1 {
		t.Fatalf("after two runs: %v, want one plugin's tool", got)
	}
	f.call(cordis.StopName, `{"pluginId":"p"}`)
	if got := f.dynamicNames(); len(got) != 0 {
		t.Fatalf("after cordis_stop: %v still registered", got)
	}
}

// TestResultsAreLosslessJSON: an execute or render result that is not
// lossless JSON data, or a value the output schema refuses, fails the
// call, naming what (upstream's harness.defineTool and ToolOutputError).
func TestResultsAreLosslessJSON(t *testing.T) {
	tests := []struct{ name, result, render, want string }{
		{"NaN", "NaN", "", "harness.defineTool execute result must be lossless JSON data"},
		{"Infinity", "Infinity", "", "harness.defineTool execute result must be lossless JSON data"},
		{"minus zero", "-0", "", "harness.defineTool execute result must be lossless JSON data"},
		{"undefined", "undefined", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a Date", "new Date(0)", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a Map", "new Map()", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a toJSON", "({ toJSON() { return 1 } })", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a BigInt", "1n", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a function", "(() => 1)", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a cycle", "(() => { const a = []; a.push(a); return a })()", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a getter", "({ get x() { return 1 } })", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a sparse array", "[, 1]", "", "harness.defineTool execute result must be lossless JSON data"},
		{"a string for a number", "'42'", "", `tool "probe" returned invalid output: "value" must be a number`},
		{"null for a number", "null", "", `tool "probe" returned invalid output: "value" must be a number`},
		{"deep nesting", "(() => { let v = 1; for (let i = 0; i < 100000; i++) v = [v]; return v })()", "", "harness.defineTool execute result nests arrays and objects deeper than 1000"},
		{"nesting at the bound", "(() => { let v = 1; for (let i = 0; i < 1000; i++) v = [v]; return v })()", "", `tool "probe" returned invalid output: "value" must be a number`},
		{"nesting past the bound", "(() => { let v = 1; for (let i = 0; i < 1001; i++) v = [v]; return v })()", "", "harness.defineTool execute result nests arrays and objects deeper than 1000"},
		{"a render of NaN", "1", "[{ type: 'text', text: NaN }]", "harness.defineTool output.render result must be lossless JSON data"},
		{"a render of an image", "1", "[{ type: 'image', data: '' }]", `output.render block 0: want {type: "text", text: string}`},
		{"a render of no array", "1", "'1'", "output.render: want an array of text blocks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			render := "[{ type: 'text', text: 'x' }]"
			if tc.render != "" {
				render = tc.render
			}
			f.define(t, `return (ctx) => { harness.registerTool(ctx, harness.defineTool({ name: 'probe', description: 'd', parameters: {},
  output: { schema: { type: 'number' }, render(_a, v) { return `+render+` } }, async execute() { return `+tc.result+` } })) }`)
			if r := f.call(cordis.RunName, runArgs); r.IsError {
				t.Fatalf("run: %s", r.Text())
			}
			r := f.call("probe", `{}`)
			if !r.IsError || !strings.Contains(r.Text(), tc.want) {
				t.Fatalf("probe = %q (value %s); want an error naming %q", r.Text(), r.Value, tc.want)
			}
		})
	}
}

// TestArgumentsReachExecuteAsJSONParseGivesThem: a "__proto__" key of
// the call's arguments is an own key of args, not its prototype (the
// arguments are never spliced into the program's text).
func TestArgumentsReachExecuteAsJSONParseGivesThem(t *testing.T) {
	f := newFixture(t)
	f.define(t, `return (ctx) => { harness.registerTool(ctx, harness.defineTool({ name: 'probe', description: 'd', parameters: { value: { type: 'number' } },
  output: { schema: { type: 'string' }, render(_a, v) { return [{ type: 'text', text: v }] } },
  async execute(args) { return JSON.stringify({ keys: Object.keys(args), plain: Object.getPrototypeOf(args) === Object.prototype, polluted: args.polluted === true }) } })) }`)
	if r := f.call(cordis.RunName, runArgs); r.IsError {
		t.Fatalf("run: %s", r.Text())
	}
	r := f.call("probe", `{"value":1,"__proto__":{"polluted":true}}`)
	if want := `{"keys":["value","__proto__"],"plain":true,"polluted":false}`; r.IsError || r.Text() != want {
		t.Fatalf("probe = %q, want %s", r.Text(), want)
	}
}

// TestDynamicCodeCallsNoTool: host code that calls a tool (at
// registration or in execute) fails: the program declares no binding, and
// no tool ran.
func TestDynamicCodeCallsNoTool(t *testing.T) {
	f := newFixture(t)
	f.define(t, `return async (ctx) => { await tools.bash({ command: 'id' }) }`)
	f.runFails(t, "cordis_run: snap-1/pkg-1:")
	f.define(t, plugin(register("probe", `{}`, "await tools.bash({ command: 'id' })")))
	if r := f.call(cordis.RunName, runArgs); r.IsError {
		t.Fatalf("run: %s", r.Text())
	}
	if r := f.call("probe", `{}`); !r.IsError {
		t.Fatalf("probe = %q, want a failure", r.Text())
	}
	if n := f.bashN.Load(); n != 0 {
		t.Fatalf("bash ran %d times", n)
	}
}

// TestADynamicToolsCallGoesThroughThePipeline: a guard that denies the
// dynamic tool ends its call before the body (no node child), a
// pre-execute listener sees it, and a schema violation never reaches it.
func TestADynamicToolsCallGoesThroughThePipeline(t *testing.T) {
	f := newFixture(t)
	f.define(t, snapshotDouble)
	if r := f.call(cordis.RunName, runArgs); r.IsError {
		t.Fatalf("run: %s", r.Text())
	}
	var seen []string
	f.reg.OnPreExecute(func(_ context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		seen = append(seen, call.Name())
		return next()
	})
	remove := f.reg.AddGuard(func(_ context.Context, call *pipeline.Call) (string, bool) {
		return "denied by the test's guard", call.Name() == "snapshot_double"
	})
	if r := f.call("snapshot_double", `{"value":21}`); !r.IsError || !strings.Contains(r.Text(), "denied by the test's guard") || r.Value != nil {
		t.Fatalf("guarded call = %q (value %s)", r.Text(), r.Value)
	}
	remove()
	if r := f.call("snapshot_double", `{"value":21}`); r.IsError || r.Text() != "42" {
		t.Fatalf("call = %q", r.Text())
	}
	if strings.Join(seen, ",") != "snapshot_double,snapshot_double" {
		t.Fatalf("pre-execute saw %v", seen)
	}
}

// TestAHostWithoutItsPartsFailsClosed: a host without a runtime, a
// policy or a registry fails cordis_run's call naming what is missing;
// nothing panics.
func TestAHostWithoutItsPartsFailsClosed(t *testing.T) {
	f := newFixture(t)
	rt := f.host.Runner.Runtime
	tests := []struct {
		name string
		host *Host
		want string
	}{
		{"no runtime", &Host{}, ErrNoRuntime.Error()},
		{"no policy", &Host{Runner: Runner{Runtime: rt}}, "no sandbox policy"},
		{"no registry", &Host{Runner: Runner{Runtime: rt, Policy: f.host.Runner.Policy}}, "no registry to register dynamic tools in"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := pipeline.NewRegistry()
			for _, name := range []string{cordis.DefineName, cordis.RunName} {
				tool := toolreg.Tool{Def: pipeline.Tool{Name: name, Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) {
					return pipeline.Output{Meta: json.RawMessage(`{"pluginId":"snap-1","packageId":"pkg-1"}`)}, nil
				}}}
				reg.Register(tc.host.Wrap(tool).Def)
			}
			args, _ := json.Marshal(map[string]any{"code": map[string]string{"host": snapshotDouble}})
			reg.Execute(pipeline.NewCall("d", cordis.DefineName, args, &pipeline.Agent{ID: "root"}, nil))
			r := reg.Execute(pipeline.NewCall("r", cordis.RunName, json.RawMessage(runArgs), &pipeline.Agent{ID: "root"}, nil))
			if !r.IsError || !strings.Contains(r.Text(), tc.want) {
				t.Fatalf("run = %q, want an error naming %q", r.Text(), tc.want)
			}
		})
	}
}
