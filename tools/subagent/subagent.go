package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Background modes of an instance.
const (
	// Continuable: a background run is a continuable child ("started
	// subagent <id>") that later turns and a settlement notice follow.
	Continuable = "continuable"
	// OneShot: a background run is a job (subagent-<n>).
	OneShot = "one-shot"
)

// JobKind is the kind of a one-shot background child's job.
const JobKind = "subagent"

// Instance configures one delegation tool (upstream's tool-subagent plugin).
type Instance struct {
	// Name is the tool name ("subagent", "subagent_fork", ...).
	Name string
	// Provider names the provider the tool delegates through.
	Provider string
	// Background is Continuable or OneShot ("": OneShot).
	Background string
	// NoBackground removes run_in_background (enableRunInBackground:
	// false): every call waits.
	NoBackground bool
	// MaxDepth caps the delegation depth; nil leaves it to the provider
	// (maxDepth: provider-managed).
	MaxDepth *int
	// ToolFilter and Persona are applied to every child.
	ToolFilter *pipeline.Filter
	Persona    string
	// Sandbox runs every child in this mode (our extension: a deployment's
	// reviewer tool whose children are read-only); it may only narrow the
	// parent's mode ("": the children inherit as upstream's do).
	Sandbox sandbox.Mode
}

// instance is one composed delegation tool.
type instance struct {
	inst Instance
	info ProviderInfo
	svc  Service
	jobs *jobs.Registry
}

// Config configures the delegation tools of one composition.
type Config struct {
	// Instances are the delegation tools, in registration order.
	Instances []Instance
	// Control adds send_message, interrupt_agent and list_agents after
	// them (upstream's tool-subagent-control and its list-agents plugin).
	Control bool
	// Service is the delegation runtime the tools drive (required).
	Service Service
	// Jobs is the job registry of one-shot background runs (nil: none).
	Jobs *jobs.Registry
}

// New returns the registrations of cfg's delegation tools, then of the
// control tools when configured. A continuable instance that may run in
// the background brings its tool:<name> prompt section (order 116.5). The
// errors are an instance's load-time refusals ([Instance]).
func New(cfg Config) ([]toolreg.Tool, error) {
	var out []toolreg.Tool
	for _, inst := range cfg.Instances {
		t, err := newInstance(inst, cfg.Service, cfg.Jobs)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if cfg.Control {
		out = append(out, control{svc: cfg.Service}.tools()...)
	}
	return out, nil
}

// newInstance composes one delegation tool. The errors are upstream's
// load-time refusals: a bad maxDepth, an empty tool filter, a provider that
// is not there, cannot enforce maxDepth or cannot make continuable children.
func newInstance(inst Instance, svc Service, jobReg *jobs.Registry) (toolreg.Tool, error) {
	if inst.Name == "" {
		inst.Name = "subagent"
	}
	if inst.Background == "" {
		inst.Background = OneShot
	}
	if inst.MaxDepth != nil {
		if _, err := delegation.ChildDepth(0, inst.MaxDepth); err != nil && errors.Is(err, delegation.ErrMaxDepth) {
			return toolreg.Tool{}, err
		}
	}
	if f := inst.ToolFilter; f != nil && f.Allow == nil && f.Deny == nil {
		return toolreg.Tool{}, errors.New("tool-subagent: `toolFilter` is configured but names neither `allow` nor `deny` — remove the key or fill the filter")
	}
	info, ok := svc.Provider(inst.Provider)
	switch {
	case !ok:
		return toolreg.Tool{}, fmt.Errorf("tool-subagent: no subagent provider registered for %q", inst.Provider)
	case inst.MaxDepth != nil && !info.DepthLimit:
		return toolreg.Tool{}, fmt.Errorf("tool-subagent: provider %q cannot enforce maxDepth (no depthLimit capability) — set maxDepth: 'provider-managed' to leave the recursion budget to the provider", inst.Provider)
	case inst.Background == Continuable && !info.Continuable:
		return toolreg.Tool{}, fmt.Errorf("tool-subagent: provider %q does not support `backgroundMode: continuable`", inst.Provider)
	case inst.Background != Continuable && inst.Background != OneShot:
		return toolreg.Tool{}, fmt.Errorf("tool-subagent: unknown background mode %q (want continuable or one-shot)", inst.Background)
	case !inst.NoBackground && inst.Background == OneShot && jobReg == nil:
		return toolreg.Tool{}, errors.New("tool-subagent: one-shot background runs need a job registry")
	}
	t := &instance{inst: inst, info: info, svc: svc, jobs: jobReg}
	reg := toolreg.Tool{Def: pipeline.Tool{Name: inst.Name, Description: t.description(), Parameters: t.parameters(), Run: t.run, ConcurrencySafe: true}}
	if !inst.NoBackground && inst.Background == Continuable {
		reg.Section = &toolreg.Section{Name: "tool:" + inst.Name, Order: ContinuableSectionOrder, Text: ContinuableSection(inst.Name)}
	}
	return reg, nil
}

func (t *instance) description() string {
	d := FreshDescription
	if t.info.InheritsContext {
		d = ForkDescription
	}
	switch {
	case t.inst.NoBackground:
		return d + " " + ForegroundSuffix
	case t.inst.Background == Continuable:
		return d + " " + ContinuableSuffix
	}
	return d + " " + OneShotSuffix
}

func (t *instance) parameters() json.RawMessage {
	prompt := FreshPrompt
	if t.info.InheritsContext {
		prompt = ForkPrompt
	}
	params := []pipeline.Param{
		{Name: "description", Type: "string", Description: LabelDescription},
		{Name: "prompt", Type: "string", Description: prompt},
	}
	if !t.inst.NoBackground {
		bg := OneShotBackground
		if t.inst.Background == Continuable {
			bg = ContinuableBackground
		}
		params = append(params, pipeline.Param{Name: "run_in_background", Type: "boolean", Description: bg})
	}
	return pipeline.ObjectSchema(params, []string{"description", "prompt"})
}

type args struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	// RunInBackground is kept raw: an instance without background has no
	// such parameter, so its schema checks no type and only a JSON true
	// refuses the call (upstream compares with === true).
	RunInBackground json.RawMessage `json:"run_in_background"`
}

// ErrNoCaller refuses an agentless call (VERBATIM).
var ErrNoCaller = errors.New("subagent tool requires a calling agent (exec.agent was undefined)")

// errBackgroundDisabled refuses run_in_background on an instance without it
// (VERBATIM).
var errBackgroundDisabled = errors.New("run_in_background is disabled for this tool instance (enableRunInBackground: false)")

// background resolves the call's route: the instance's default (continuable
// runs in the background) unless the call says otherwise. Without
// background, any value but true (a string, a number, null) is ignored;
// with it, the schema has already checked that the value is a boolean.
func (t *instance) background(req json.RawMessage) (bool, error) {
	if t.inst.NoBackground {
		if string(req) == "true" {
			return false, errBackgroundDisabled
		}
		return false, nil
	}
	var bg *bool
	if len(req) > 0 {
		if err := json.Unmarshal(req, &bg); err != nil {
			return false, fmt.Errorf("invalid arguments: run_in_background: %w", err)
		}
	}
	if bg != nil {
		return *bg, nil
	}
	return t.inst.Background == Continuable, nil
}

// run routes one call: a continuable start, a background job, or a
// foreground run that waits for the child and disposes it.
func (t *instance) run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a args
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	if call.Agent() == nil {
		return pipeline.Output{}, ErrNoCaller
	}
	req := Request{Caller: call.Agent(), CallID: call.CallID(), Label: a.Description, Prompt: a.Prompt,
		MaxDepth: t.inst.MaxDepth, ToolFilter: t.inst.ToolFilter, Persona: t.inst.Persona, Sandbox: t.inst.Sandbox}
	bg, err := t.background(a.RunInBackground)
	if err != nil {
		return pipeline.Output{}, err
	}
	switch {
	case bg && t.inst.Background == Continuable:
		id, err := t.svc.StartContinuable(ctx, t.inst.Provider, req)
		if err != nil {
			return pipeline.Output{}, err
		}
		return output("started subagent "+id, map[string]string{"kind": "continuable", "subagentId": id}), nil
	case bg:
		id, err := t.startJob(req)
		if err != nil {
			return pipeline.Output{}, err
		}
		return output("started background subagent job "+id, map[string]string{"kind": "background", "jobId": id}), nil
	}
	run, err := t.svc.Start(ctx, t.inst.Provider, req)
	if err != nil {
		return pipeline.Output{}, err
	}
	res, err := SettleForeground(ctx, run)
	if err != nil {
		return pipeline.Output{}, err
	}
	value := struct {
		Kind   string            `json:"kind"`
		RunID  string            `json:"runId"`
		Output []json.RawMessage `json:"output"`
	}{"foreground", run.ID(), res.Output}
	if value.Output == nil {
		value.Output = []json.RawMessage{}
	}
	return output(delegation.OutputText(res.Output), value), nil
}

func output(text string, value any) pipeline.Output {
	raw, _ := json.Marshal(value)
	return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(text)}, Value: raw}
}

// SettleForeground collects a foreground run and disposes it, as upstream's
// tool does: a run that did not complete fails with its headline,
// diagnostic and partial output; a run and a disposal that both fail give
// "subagent run failed: <run>; dispose failed: <disposal>" (each as
// String(error) renders it); a disposal failure alone is the failure.
func SettleForeground(ctx context.Context, run Run) (Result, error) {
	res, runErr := run.Result(ctx)
	if runErr == nil && res.Stop != delegation.StopCompleted {
		runErr = errors.New(delegation.RunFailure(res.Stop, res.Diagnostic, res.Output))
	}
	disposeErr := run.Dispose()
	switch {
	case runErr != nil && disposeErr != nil:
		return Result{}, fmt.Errorf("subagent run failed: %s; dispose failed: %s", JSString(runErr), JSString(disposeErr))
	case runErr != nil:
		return Result{}, runErr
	case disposeErr != nil:
		return Result{}, disposeErr
	}
	return res, nil
}

// JSString is String(error) for an error as upstream's JavaScript renders
// it: "<name>: <message>", the name a coded error's (SubagentError) or
// "Error".
func JSString(err error) string {
	if name, _, ok := pipeline.CodeOf(err); ok && name != "" {
		return name + ": " + pipeline.ErrorMessage(err)
	}
	return "Error: " + pipeline.ErrorMessage(err)
}
