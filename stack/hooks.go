package stack

import (
	"fmt"
	"os"

	"github.com/dshsim/dshsim/hooks"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/repeat"
	"github.com/dshsim/dshsim/sandbox"
)

// addHooks composes the hook bridges, as the acp-agent mounts them: Claude
// Code's ./hooks.json, then Codex's ./codex-hooks.json, each read once from
// the launch cwd (HooksConfig.Dir), their listeners inside the ones already
// registered (spill stays outermost). Hook commands run under the
// deployment's mode rooted at the launch cwd, never the session's override.
func (s *Stack) addHooks() error {
	if s.cfg.Hooks.Dir == "" {
		return nil
	}
	provider, err := sandbox.NewProvider(sandbox.Config{Chain: s.cfg.SandboxChain, LauncherPath: s.cfg.LauncherPath})
	if err != nil {
		return fmt.Errorf("stack: sandbox provider for hooks: %w", err)
	}
	out, err := os.MkdirTemp("", "dsh-stack-hooks-")
	if err != nil {
		return fmt.Errorf("stack: hook output directory: %w", err)
	}
	s.closers = append(s.closers, func() error { return os.RemoveAll(out) })
	for _, d := range hooks.Dialects {
		loaded := false
		b, err := hooks.Load(d, hooks.Options{
			ConfigPath: "./" + d.File, BaseDir: s.cfg.Hooks.Dir, Strict: s.cfg.Hooks.Strict,
			Runtime: hooks.Runtime{
				Sandbox:  sandbox.Policy{Mode: s.cfg.Mode, WorkspaceRoot: s.cfg.Hooks.Dir, Limits: s.cfg.Limits},
				Confiner: provider, DefaultDir: s.cfg.Hooks.Dir, OutputDir: out,
			},
			// Lines logged while calls run; the load-time ones are in hookLines.
			Logf: func(line string) {
				if loaded {
					s.warn(line)
				}
			},
		})
		if err != nil {
			return fmt.Errorf("stack: %w", err)
		}
		loaded = true
		s.closers = append(s.closers, func() error { b.Drain(); return nil }) // before the output directory goes
		b.Register(s.reg)
		s.bridges = append(s.bridges, b)
		st := b.Status()
		s.hookLines = append(s.hookLines, st.Problems()...)
		if st.Err == nil {
			s.hookLines = append(s.hookLines, b.Warnings()...) // skipped hooks, in upstream's words
		}
	}
	return nil
}

// HookBridges returns the hook bridges in registration order (Claude Code,
// then Codex), for the agent loop's turn points ([hooks.Bridge.PromptSubmit],
// [hooks.Bridge.Stop]); nil when no hooks are mounted.
func (s *Stack) HookBridges() []*hooks.Bridge { return append([]*hooks.Bridge(nil), s.bridges...) }

// SessionStarted runs the SessionStart hooks of the session's agent, a new
// session's ("startup") or a resumed one's ("resume"), detached, as
// upstream's agent/session-start listeners do when the session is
// published; inject enters their context at the agent's next step without
// waking it. The agent loop calls it once the session exists, before its
// first prompt.
func (s *Stack) SessionStarted(source string, inject func(pipeline.ContextMessage)) {
	s.sessionStarted(s.agent, source, inject)
}

func (s *Stack) sessionStarted(a *pipeline.Agent, source string, inject func(pipeline.ContextMessage)) {
	for _, b := range s.bridges {
		b.SessionStart(a, source, inject)
	}
}

// addReminder composes upstream's repeated-call reminder (package repeat,
// default thresholds), as the agent's tool chain carries it.
func (s *Stack) addReminder() error {
	r, err := repeat.New(nil)
	if err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	r.Register(s.reg)
	s.reminder = r
	return nil
}

// UserMessageEntered tells the stack that a step entered a user's message:
// the repeated-call reminder forgets the agent's run (upstream resets it at
// such a pre-step).
func (s *Stack) UserMessageEntered() { s.userMessageEntered(s.agent) }

// userMessageEntered resets agent's repeated-call run.
func (s *Stack) userMessageEntered(agent *pipeline.Agent) {
	if s.reminder != nil {
		s.reminder.Reset(agent)
	}
}
