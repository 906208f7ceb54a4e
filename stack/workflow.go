package stack

import (
	"fmt"

	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/toolreg"
	"github.com/dshsim/dshsim/tools/workflow"
)

// addWorkflow composes the workflow tool over rt: its body runs in the
// Node runtime run_code uses, in a child confined by bash's confiner under
// the call's policy; each agent() is a one-shot spawn child of the caller
// (a read-only step when it asks for one). Without node the tool is
// composed and every run fails closed.
func (s *Stack) addWorkflow(rt *subagents) error {
	deps := workflow.Deps{Policy: s.policyFor, Service: rt}
	if s.confiner != nil {
		deps.Confiner = s.confiner
	}
	if r, err := noderuntime.New(s.cfg.CodeRuntime); err != nil {
		s.warn(fmt.Sprintf("stack: workflow has no runtime: %v", err))
	} else {
		deps.Runtime = r
	}
	regs, err := workflow.New(workflow.Config{Provider: ProviderSpawn, MaxConcurrentAgents: rt.cfg.WorkflowMaxConcurrentAgents, Deps: deps})
	if err != nil {
		return err
	}
	if err := s.register(toolreg.Defs(regs...)...); err != nil {
		return err
	}
	s.toolSections = append(s.toolSections, toolSection{workflow.Name, PromptSection{"tool:" + workflow.Name, workflow.SectionOrder, workflow.Section}})
	return nil
}
