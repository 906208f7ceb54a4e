package dynamic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/argschema"
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
// output.render(args, value), each result checked as upstream's
// harness.defineTool checks it: lossless JSON data (never undefined, a
// function, a class instance or a non-finite number), nested at most
// [MaxResultDepth] deep. The arguments too
// reach the program as a JSON string, parsed inside (a "__proto__" key
// stays a key, as JSON.parse keeps it).
const program = `const source = %s;
const mode = %s;
const want = %s;
const args = JSON.parse(%s);
const found = [];
const marker = Symbol('dsh.dynamicTool');
const harness = Object.freeze({
  defineTool(spec) { return { [marker]: true, spec }; },
  registerTool(_ctx, tool) {
    if (!tool || tool[marker] !== true) throw new Error('dynamic tool registration must use a tool returned by harness.defineTool(...)');
    found.push(tool.spec);
  },
});
const lossless = (root, at) => {
  const seen = new Set(), stack = [[root, 0]];
  const bad = () => new Error(at + ' must be lossless JSON data (objects, arrays, strings, numbers, booleans, null) — not a class instance, function, Map/Set, Date, or undefined. Return a plain object built from the values you need, or ` + "`return null`" + ` when the caller needs no value back.');
  while (stack.length > 0) {
    const [v, depth] = stack.pop();
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') { if (!Number.isFinite(v) || Object.is(v, -0)) throw bad(); continue; }
    if (typeof v !== 'object' || seen.has(v)) throw bad();
    if (depth >= %d) throw new Error(at + ' nests arrays and objects deeper than %d');
    seen.add(v);
    const proto = Object.getPrototypeOf(v);
    if (Array.isArray(v)) {
      if (proto !== Array.prototype || Reflect.ownKeys(v).length !== v.length + 1) throw bad();
      for (let i = 0; i < v.length; i++) { if (!Object.hasOwn(v, i)) throw bad(); stack.push([v[i], depth + 1]); }
      continue;
    }
    if (proto !== Object.prototype && proto !== null) throw bad();
    for (const k of Reflect.ownKeys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, k);
      if (typeof k !== 'string' || !d.enumerable || !('value' in d)) throw bad();
      stack.push([d.value, depth + 1]);
    }
  }
  return root;
};
const made = new Function('harness', source)(harness);
const apply = typeof made === 'function' ? made : (made && typeof made.apply === 'function' ? made.apply.bind(made) : null);
if (apply === null) throw new Error('the host code returned no Cordis Plugin (a function, or an object with apply)');
await apply({});
if (mode === 'define') {
  return found.map((s) => ({
    name: s && s.name, description: s && s.description,
    parameters: s && s.parameters !== undefined ? s.parameters : null,
    output: s && s.output && s.output.schema !== undefined ? s.output.schema : null,
    execute: !!s && typeof s.execute === 'function',
    render: !!s && !!s.output && typeof s.output.render === 'function',
  }));
}
const spec = found.find((s) => s && s.name === want);
if (!spec || typeof spec.execute !== 'function' || !spec.output || typeof spec.output.render !== 'function') throw new Error('the package no longer registers ' + want);
const value = lossless(await spec.execute(args), 'harness.defineTool execute result');
const content = lossless(spec.output.render(args, value), 'harness.defineTool output.render result');
return { value, content };`

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
	if r.Policy == nil {
		return nil, errors.New("no sandbox policy to run the host code under")
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
		Code:     fmt.Sprintf(program, lit(code), lit(mode), lit(want), lit(string(args)), MaxResultDepth, MaxResultDepth),
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
	if err := CheckCounts(len(defs), 0); err != nil {
		return nil, err
	}
	tools := make([]pipeline.Tool, 0, len(defs))
	for i, d := range defs {
		params, output, err := Check(d)
		if err != nil {
			return nil, fmt.Errorf("registration %d: %w", i+1, err)
		}
		if j := slices.IndexFunc(tools, func(t pipeline.Tool) bool { return strings.EqualFold(t.Name, d.Name) }); j >= 0 {
			return nil, fmt.Errorf("registration %d: harness.defineTool name: %q is registered twice (as %q by registration %d)", i+1, d.Name, tools[j].Name, j+1)
		}
		t, err := r.tool(code, d.Name, d.Description, params, output)
		if err != nil {
			return nil, fmt.Errorf("registration %d: %w", i+1, err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// tool is the pipeline tool of one definition: its body runs the host
// code's execute and render for the call, and the value must satisfy the
// output schema (upstream's ToolOutputError when it does not); not
// concurrency-safe: upstream declares nothing for a dynamic tool.
func (r Runner) tool(code, name, description string, params, output json.RawMessage) (pipeline.Tool, error) {
	schema, err := argschema.Compile(output)
	if err != nil {
		return pipeline.Tool{}, fmt.Errorf("%s: output schema: %w", name, err)
	}
	return pipeline.Tool{
		Name: name, Description: description, Parameters: params, OutputSchema: output,
		Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			v, err := r.run(ctx, call, code, "call", name, call.Args())
			if err != nil {
				return pipeline.Output{}, fmt.Errorf("%s: %w", name, err)
			}
			out, err := decodeOutput(name, v)
			if err != nil {
				return pipeline.Output{}, err
			}
			if v := schema.ValidateAt(out.Value, "value"); len(v) > 0 {
				return pipeline.Output{}, pipeline.NewError("ToolOutputError", "INVALID_TOOL_OUTPUT", fmt.Sprintf("tool %q returned invalid output: %s", name, strings.Join(v, "; ")))
			}
			return out, nil
		},
	}, nil
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
