package stack

import (
	"fmt"
	"os"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/outfile"
	"github.com/dshsim/dshsim/tools/bash"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// addBash composes the bash tool under the real sandbox (the platform
// chain: bwrap, then Landlock on Linux, Landlock applied in this process with
// the runner as its fallback), with the background job registry and the
// job_output, job_kill and job_list tools, as upstream's base bundle mounts
// them. It returns the confiner, which run_code confines its programs with.
func (s *Stack) addBash() (*chain.Confiner, error) {
	confiner, err := chain.New(chain.Config{Runner: s.cfg.LandlockRunner,
		Sandbox: sandbox.Config{Chain: s.cfg.SandboxChain, LauncherPath: s.cfg.LauncherPath, LandlockABICap: s.cfg.LandlockABICap}})
	if err != nil {
		return nil, fmt.Errorf("stack: sandbox provider: %w", err)
	}
	s.closers = append(s.closers, confiner.Close) // closed last
	// One private directory for every full-output file of the session's
	// processes, foreground and background, as upstream's executor keeps
	// one per process.
	out, err := outfile.PrivateDir()
	if err != nil {
		return nil, fmt.Errorf("stack: full-output directory: %w", err)
	}
	s.closers = append(s.closers, func() error { return os.RemoveAll(out) })
	reg := jobs.NewRegistry(jobs.Options{EscalationAdvertised: true, OutputDir: out, MaxConcurrentJobsPerOwner: s.cfg.MaxConcurrentJobsPerOwner, Notify: s.cfg.JobNotify, Gate: s.cfg.JobGate})
	s.closers = append(s.closers, func() error { return reg.Close(time.Second) })
	deps := bash.Deps{
		Policy:   s.policyFor,
		Escalate: s.escalate,
		Confiner: confiner,
		Jobs:     reg,
		Warn:     s.warn,
	}
	if s.cfg.Without.Policy {
		deps.Policy, deps.Escalate, deps.Confiner = nil, nil, nil // dsh-bash-local: unconfined
	}
	bashRegs, err := bash.New(bash.Config{TimeoutMs: s.cfg.BashTimeout.Milliseconds(), PromoteOnTimeout: s.cfg.BashPromoteOnTimeout, OutputDir: out, Deps: deps})
	if err != nil {
		return nil, fmt.Errorf("stack: bash tool: %w", err)
	}
	s.closers = append(s.closers, bashRegs[0].Close)
	s.confiner, s.jobs = confiner, reg
	jobRegs, err := jobs.New(jobs.Config{Registry: reg, TaskWording: s.cfg.JobTaskWording})
	if err != nil {
		return nil, fmt.Errorf("stack: job tools: %w", err)
	}
	var tools []pipeline.Tool
	if !s.cfg.Without.Bash {
		tools = append(tools, toolreg.Defs(bashRegs...)...)
	}
	if !s.cfg.Without.JobTools {
		tools = append(tools, toolreg.Defs(jobRegs...)...)
	}
	if err := s.register(tools...); err != nil {
		return nil, err
	}
	return confiner, nil
}

// register registers tools in order; the error names the tool.
func (s *Stack) register(tools ...pipeline.Tool) error {
	for _, t := range tools {
		if _, err := s.reg.Register(t); err != nil {
			return fmt.Errorf("stack: register %s: %w", t.Name, err)
		}
	}
	return nil
}
