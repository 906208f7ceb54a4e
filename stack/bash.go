package stack

import (
	"fmt"
	"os"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/outfile"
	"github.com/dshsim/dshsim/tools/bash"
	"github.com/dshsim/dshsim/tools/jobs"
)

// The bash tool under the real sandbox provider (the platform chain: bwrap,
// then Landlock on Linux), with the background job registry and the
// job_output, job_kill and job_list tools, as upstream's base bundle mounts
// them.
func init() {
	toolBuilders = append(toolBuilders, func(p *parts) error {
		provider, err := sandbox.NewProvider(sandbox.Config{Chain: p.cfg.SandboxChain, LauncherPath: p.cfg.LauncherPath, LandlockABICap: p.cfg.LandlockABICap})
		if err != nil {
			return fmt.Errorf("stack: sandbox provider: %w", err)
		}
		// One private directory for every full-output file of the
		// session's processes, foreground and background, as upstream's
		// executor keeps one per process.
		out, err := outfile.PrivateDir()
		if err != nil {
			return fmt.Errorf("stack: full-output directory: %w", err)
		}
		p.closers = append(p.closers, func() error { return os.RemoveAll(out) })
		reg := jobs.New(jobs.Options{EscalationAdvertised: true, OutputDir: out, MaxConcurrentJobsPerOwner: p.cfg.MaxConcurrentJobsPerOwner, Notify: p.cfg.JobNotify, Gate: p.cfg.JobGate})
		p.closers = append(p.closers, func() error { return reg.Close(time.Second) })
		tool, err := bash.New(bash.Config{TimeoutMs: p.cfg.BashTimeout.Milliseconds(), PromoteOnTimeout: p.cfg.BashPromoteOnTimeout, OutputDir: out}, bash.Deps{
			Policy:   p.policyFor,
			Escalate: p.escalate,
			Confiner: provider,
			Jobs:     reg,
			Warn:     p.warn,
		})
		if err != nil {
			return fmt.Errorf("stack: bash tool: %w", err)
		}
		p.closers = append(p.closers, tool.Close)
		p.provider, p.jobs = provider, reg
		jobTools, err := jobs.Tools(reg, jobs.ToolsConfig{})
		if err != nil {
			return fmt.Errorf("stack: job tools: %w", err)
		}
		defs := append([]pipeline.Tool{tool.Definition()}, jobTools...)
		for _, t := range defs {
			if _, err := p.reg.Register(t); err != nil {
				return fmt.Errorf("stack: register %s: %w", t.Name, err)
			}
		}
		return nil
	})
}
