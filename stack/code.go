package stack

import (
	"fmt"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/code"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/toolreg"
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

// codeTool composes run_code in code and both modes: the Node runtime, the
// programs confined by bash's confiner under the call's policy, every
// nested call through this registry, spill's durable-log arm on the logged
// copies; its registration brings the mode's prompt sections. When node
// cannot be found the tool is still composed without a runtime: every run
// and every prompt assembly then fails with upstream's missing-runtime
// error, and nothing runs.
func (s *Stack) codeTool() ([]toolreg.Tool, error) {
	deps := code.Deps{
		Registry: s.reg,
		Policy:   s.policyFor, // bash's: the program runs as a command would
		Confiner: s.confiner,
		Warn:     s.warn,
	}
	if rt, err := noderuntime.New(s.cfg.CodeRuntime); err != nil {
		s.warn(fmt.Sprintf("stack: run_code has no runtime: %v", err))
	} else {
		deps.Runtime = rt
	}
	if s.spill != nil {
		deps.DispatchLog = s.spill.DispatchLog
	}
	tools, err := code.New(code.Config{Mode: s.cfg.ToolsMode, Deps: deps})
	if err != nil {
		return nil, fmt.Errorf("run_code: %w", err)
	}
	return tools, nil
}

// collapse ends a model-direct call of any tool but run_code in code mode
// before any stage, as upstream's registry collapses it (UNKNOWN_TOOL: in
// code mode the model is offered run_code alone).
func (s *Stack) collapse(call *pipeline.Call) (pipeline.Result, bool) {
	if s.cfg.ToolsMode != ToolsCode || call.Parent() != nil || call.Name() == code.Name {
		return pipeline.Result{}, false
	}
	if call.Signal().Err() != nil {
		return pipeline.ErrorResult(pipeline.ErrAbortedBeforeDispatch), true
	}
	return pipeline.ErrorResult(code.DirectCallError(call.Name())), true
}

// WireTools returns the tools the model is offered (the session agent's
// visible set), sorted by name (upstream's order without a toolOrder):
// every composed tool (native), run_code alone (code), or both.
func (s *Stack) WireTools() []pipeline.Tool { return s.wireTools(s.agent) }
