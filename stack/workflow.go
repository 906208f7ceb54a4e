package stack

import (
	"fmt"
	"github.com/dshsim/dshsim/tools/ralph"

	"github.com/dshsim/dshsim/tools/askuser"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/toolreg"
	"github.com/dshsim/dshsim/tools/workflow"
)

// workflowTool composes the workflow tool over the delegation runtime: its body runs in the
// Node runtime run_code uses, in a child confined by bash's confiner under
// the call's policy; each agent() is a one-shot spawn child of the caller
// (a read-only step when it asks for one). Without node the tool is
// composed and every run fails closed.
func (s *Stack) workflowTool() ([]toolreg.Tool, error) {
	deps := workflow.Deps{Policy: s.policyFor, Service: s.children, Confiner: s.confiner}
	if r, err := noderuntime.New(s.cfg.CodeRuntime); err != nil {
		s.warn(fmt.Sprintf("stack: workflow has no runtime: %v", err))
	} else {
		deps.Runtime = r
	}
	return workflow.New(workflow.Config{Provider: ProviderSpawn, MaxConcurrentAgents: s.cfg.Subagents.WorkflowMaxConcurrentAgents, Deps: deps})
}

// ralphTool composes the ralph tool: its fresh children through the
// delegation runtime's spawn provider.
func (s *Stack) ralphTool() ([]toolreg.Tool, error) {
	return ralph.New(ralph.Config{Provider: ProviderSpawn, Service: s.children})
}

// askUserTool composes ask_user_question (a root's questions go to
// SubagentsConfig.Ask; a delegated caller's are refused).
func (s *Stack) askUserTool() ([]toolreg.Tool, error) {
	return askuser.New(askuser.Config{Ask: s.cfg.Subagents.Ask})
}
