package stack

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/code"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/code/sdk"
)

// Tools modes: how the tools are presented to the model (upstream's tool
// presentation mode).
const (
	// ToolsNative offers every tool directly; no run_code.
	ToolsNative = "native"
	// ToolsCode offers run_code alone; every other tool is reached from a program.
	ToolsCode = "code"
	// ToolsBoth offers every tool and run_code.
	ToolsBoth = "both"
)

func validateToolsMode(mode string) error {
	switch mode {
	case "", ToolsNative, ToolsCode, ToolsBoth:
		return nil
	}
	return fmt.Errorf("stack: unknown tools mode %q (want native, code or both)", mode)
}

// run_code in code and both modes: the Node runtime, the programs confined
// by the bash tool's provider under the call's policy, every nested call
// through this registry, spill's durable-log arm on the logged copies. When
// node cannot be found the tool is still composed without a runtime: every
// run and every prompt assembly then fails with upstream's missing-runtime
// error, and nothing runs.
func init() {
	toolBuilders = append(toolBuilders, func(p *parts) error {
		mode := p.cfg.ToolsMode
		if mode == "" || mode == ToolsNative {
			return nil
		}
		if p.provider == nil {
			return errors.New("stack: run_code needs the bash tool's sandbox provider (compose bash first)")
		}
		deps := code.Deps{
			Registry: p.reg,
			Policy:   p.policyFor, // bash's: the program runs as a command would
			Confiner: p.provider,
			Warn:     p.warn,
		}
		if rt, err := noderuntime.New(p.cfg.CodeRuntime); err != nil {
			p.warn(fmt.Sprintf("stack: run_code has no runtime: %v", err))
		} else {
			deps.Runtime = rt
		}
		if p.spill != nil {
			deps.DispatchLog = p.spill.DispatchLog
		}
		tool, err := code.New(code.Config{Mode: mode}, deps)
		if err != nil {
			return fmt.Errorf("stack: run_code: %w", err)
		}
		if _, err := p.reg.Register(tool.Definition()); err != nil {
			return fmt.Errorf("stack: register %s: %w", code.Name, err)
		}
		p.runCode = tool
		return nil
	})
}

// wireTools is the model's tool list (the session agent's visible set),
// sorted by name (upstream's order without a toolOrder).
func (p *parts) wireTools() []pipeline.Tool {
	var out []pipeline.Tool
	for _, t := range p.reg.ToolsFor(p.root) {
		if p.cfg.ToolsMode != ToolsCode || t.Name == code.Name {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b pipeline.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// modeSections are tools:code-only (code) and tools:sdk (code and both).
func (p *parts) modeSections() ([]PromptSection, error) {
	if p.runCode == nil {
		return nil, nil
	}
	if !p.runCode.HasRuntime() {
		return nil, code.MissingRuntimeError(p.cfg.ToolsMode)
	}
	var secs []PromptSection
	if p.cfg.ToolsMode == ToolsCode {
		secs = append(secs, PromptSection{Name: "tools:code-only", Order: sdk.CodeOnlyOrder, Text: sdk.CodeOnly})
	}
	sdkTools := p.reg.ToolsFor(p.root)
	return append(secs, PromptSection{Name: "tools:sdk", Order: sdk.SectionOrder, Text: code.SDK(sdkTools)}), nil
}

// collapse ends a model-direct call of any tool but run_code in code mode
// before any stage, as upstream's registry collapses it (UNKNOWN_TOOL: in
// code mode the model is offered run_code alone).
func (p *parts) collapse(call *pipeline.Call) (pipeline.Result, bool) {
	if p.cfg.ToolsMode != ToolsCode || call.Parent() != nil || call.Name() == code.Name {
		return pipeline.Result{}, false
	}
	if call.Signal().Err() != nil {
		return pipeline.ErrorResult(pipeline.ErrAbortedBeforeDispatch), true
	}
	return pipeline.ErrorResult(code.DirectCallError(call.Name())), true
}

// WireTools returns the tools the model is offered, sorted by name: every
// composed tool (native), run_code alone (code), or both.
func (s *Stack) WireTools() []pipeline.Tool { return s.impl.wireTools() }
