package stack

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/outfile"
	"github.com/dshsim/dshsim/tools/bash"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// bashTools composes the bash tool under the real sandbox (the platform
// chain: bwrap, then Landlock on Linux, Landlock applied in this process with
// the runner as its fallback), with the background job registry and the
// job_output, job_kill and job_list tools, as upstream's base bundle mounts
// them. The confiner it composes (Stack.Confiner) confines run_code's
// programs, the workflow's and the lsp servers too.
func (s *Stack) bashTools() ([]toolreg.Tool, error) {
	confiner, err := chain.New(chain.Config{Runner: s.cfg.LandlockRunner,
		Sandbox: sandbox.Config{Chain: s.cfg.SandboxChain, LauncherPath: s.cfg.LauncherPath, LandlockABICap: s.cfg.LandlockABICap}})
	if err != nil {
		return nil, fmt.Errorf("sandbox provider: %w", err)
	}
	s.closers = append(s.closers, confiner.Close) // closed last
	// One private directory for every full-output file of the session's
	// processes, foreground and background, as upstream's executor keeps
	// one per process.
	out, err := outfile.PrivateDir()
	if err != nil {
		return nil, fmt.Errorf("full-output directory: %w", err)
	}
	s.closers = append(s.closers, func() error { return os.RemoveAll(out) })
	reg := jobs.NewRegistry(jobs.Options{EscalationAdvertised: true, OutputDir: out, MaxConcurrentJobsPerOwner: s.cfg.Jobs.MaxConcurrentPerOwner, Notify: s.cfg.Jobs.Notify, Gate: s.cfg.Jobs.Gate})
	s.closers = append(s.closers, func() error { return reg.Close(time.Second) })
	s.confiner, s.jobs = confiner, reg
	deps := bash.Deps{Policy: s.policyFor, Escalate: s.escalate, Confiner: confiner, Jobs: reg, Warn: s.warn}
	if s.cfg.Without.Policy {
		deps.Policy, deps.Escalate, deps.Confiner = nil, nil, nil // dsh-bash-local: unconfined
	}
	tools, err := bash.New(bash.Config{TimeoutMs: s.cfg.Bash.Timeout.Milliseconds(), PromoteOnTimeout: s.cfg.Bash.PromoteOnTimeout, OutputDir: out, Deps: deps})
	if err != nil {
		return nil, fmt.Errorf("bash tool: %w", err)
	}
	jobTools, err := jobs.New(jobs.Config{Registry: reg, TaskWording: s.cfg.Jobs.TaskWording})
	if err != nil {
		return nil, fmt.Errorf("job tools: %w", err)
	}
	return slices.Concat(tools, jobTools), nil
}
