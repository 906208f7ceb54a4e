package dynamic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// program is the run_code program that evaluates a package's host code:
// the code (a JSON string, compiled by the Function constructor inside the
// program, never spliced into its text) is called with a harness whose
// defineTool marks a spec and whose registerTool collects it; the Cordis
// Plugin it returns (a function, or an object with apply) is applied with
// an empty context. Mode "define" returns the collected definitions'
// data; mode "call" runs the named tool's execute(args) and its
// output.render(args, value) (without one: the value as JSON text).
const program = `const source = %s;
const mode = %s;
const want = %s;
const args = %s;
const found = [];
const marker = Symbol('dsh.dynamicTool');
const harness = Object.freeze({
  defineTool(spec) { return { [marker]: true, spec }; },
  registerTool(_ctx, tool) {
    if (!tool || tool[marker] !== true) throw new Error('dynamic tool registration must use a tool returned by harness.defineTool(...)');
    found.push(tool.spec);
  },
});
const made = new Function('harness', source)(harness);
const apply = typeof made === 'function' ? made : (made && typeof made.apply === 'function' ? made.apply.bind(made) : null);
if (apply === null) throw new Error('the host code returned no Cordis Plugin (a function, or an object with apply)');
await apply({});
if (mode === 'define') {
  return found.map((s) => ({
    name: s && s.name, description: s && s.description,
    parameters: s && s.parameters !== undefined ? s.parameters : null,
    output: s && s.output && s.output.schema !== undefined ? s.output.schema : null,
  }));
}
const spec = found.find((s) => s && s.name === want);
if (!spec || typeof spec.execute !== 'function') throw new Error('the package no longer registers ' + want);
const value = await spec.execute(args);
const content = spec.output && typeof spec.output.render === 'function'
  ? spec.output.render(args, value)
  : [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }];
return { value: value === undefined ? null : value, content };`

// Runner runs the host code's programs: in run_code's Node runtime,
// confined by the stack's confiner under the policy of the call that
// runs it (the same sandbox as run_code's and bash's commands).
type Runner struct {
	// Runtime is run_code's runtime (nil: node is not usable, and every
	// run fails).
	Runtime *noderuntime.Runtime
	// Policy is the sandbox policy of a call.
	Policy func(*pipeline.Call) (sandbox.Policy, error)
	// Confiner confines a confined mode's child.
	Confiner spawn.Confiner
}

// ErrNoRuntime is a run where node is not usable.
var ErrNoRuntime = errors.New("dynamic tools need run_code's Node runtime, which is not usable here")

// run evaluates code in mode for call: "define" (want and args unused)
// or "call" of tool want with args; the program's value.
func (r Runner) run(ctx context.Context, call *pipeline.Call, code, mode, want string, args json.RawMessage) (json.RawMessage, error) {
	if r.Runtime == nil {
		return nil, ErrNoRuntime
	}
	pol, err := r.Policy(call)
	if err != nil {
		return nil, err
	}
	lit := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	if len(args) == 0 {
		args = json.RawMessage("null")
	}
	res, err := r.Runtime.Run(ctx, noderuntime.Request{
		Code:     fmt.Sprintf(program, lit(code), lit(mode), lit(want), string(args)),
		Policy:   pol,
		Confiner: r.Confiner,
	})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, fmt.Errorf("%s: %s", res.Error.Kind, res.Error.Message)
	}
	return res.Value, nil
}

// Definitions evaluates code (a package's host half) for call and
// returns the tools it registers, each checked ([Check]).
func (r Runner) Definitions(ctx context.Context, call *pipeline.Call, code string) ([]pipeline.Tool, error) {
	v, err := r.run(ctx, call, code, "define", "", nil)
	if err != nil {
		return nil, err
	}
	var defs []Definition
	if err := json.Unmarshal(v, &defs); err != nil {
		return nil, fmt.Errorf("the host code's registrations: %v", err)
	}
	tools := make([]pipeline.Tool, 0, len(defs))
	for i, d := range defs {
		params, output, err := Check(d)
		if err != nil {
			return nil, fmt.Errorf("registration %d: %w", i+1, err)
		}
		if slices.ContainsFunc(tools, func(t pipeline.Tool) bool { return t.Name == d.Name }) {
			return nil, fmt.Errorf("registration %d: harness.defineTool name: %q is registered twice", i+1, d.Name)
		}
		tools = append(tools, r.tool(code, d.Name, d.Description, params, output))
	}
	return tools, nil
}

// tool is the pipeline tool of one definition: its body runs the host
// code's execute and render for the call (not concurrency-safe: upstream
// declares nothing for a dynamic tool).
func (r Runner) tool(code, name, description string, params, output json.RawMessage) pipeline.Tool {
	return pipeline.Tool{
		Name: name, Description: description, Parameters: params, OutputSchema: output,
		Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			v, err := r.run(ctx, call, code, "call", name, call.Args())
			if err != nil {
				return pipeline.Output{}, fmt.Errorf("%s: %w", name, err)
			}
			return decodeOutput(name, v)
		},
	}
}

// decodeOutput is a call's {value, content}: content text blocks only.
func decodeOutput(name string, v json.RawMessage) (pipeline.Output, error) {
	var out struct {
		Value   json.RawMessage `json:"value"`
		Content []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(v, &out); err != nil {
		return pipeline.Output{}, fmt.Errorf("%s: output.render: want an array of text blocks: %v", name, err)
	}
	blocks := make([]pipeline.Block, 0, len(out.Content))
	for i, b := range out.Content {
		if b.Type != "text" || b.Text == nil {
			return pipeline.Output{}, fmt.Errorf("%s: output.render block %d: want {type: \"text\", text: string}", name, i)
		}
		blocks = append(blocks, pipeline.Block{Type: "text", Text: *b.Text})
	}
	return pipeline.Output{Value: out.Value, Content: blocks}, nil
}
