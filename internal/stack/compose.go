package stack

import (
	"errors"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
)

// missing lists the stack pieces this build does not compose yet. compose
// refuses to build a stack while any is missing, naming them.
var missing = []string{
	"sandbox provider + executor (sandbox, sandbox/spawn)",
	"policy resolver and runtime-context rendering (pipeline/policy)",
	"approval service (pipeline/approval)",
	"escalation (escalation.Approve)",
	"bash tool (internal/bashtool)",
	"file tools with observation (fsobserve/fstools)",
	"spill policy and store (spill)",
}

func compose(cfg Config, agent *pipeline.Agent) (impl, error) {
	if len(missing) > 0 {
		return nil, errors.New("stack: not composed yet, missing: " + strings.Join(missing, "; "))
	}
	return nil, errors.New("stack: unreachable")
}
