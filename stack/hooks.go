package stack

import (
	"fmt"
	"os"

	"github.com/dshsim/dshsim/hooks"
	"github.com/dshsim/dshsim/sandbox"
)

// The hook bridges, as the acp-agent mounts them: Claude Code's
// ./hooks.json, then Codex's ./codex-hooks.json, each read once from the
// launch cwd (Config.HooksDir), their listeners inside the ones already
// registered (spill stays outermost). Hook commands run under the
// deployment's mode rooted at the launch cwd, never the session's override.
func init() {
	toolBuilders = append(toolBuilders, func(p *parts) error {
		if p.cfg.HooksDir == "" {
			return nil
		}
		provider, err := sandbox.NewProvider(sandbox.Config{Chain: p.cfg.SandboxChain, LauncherPath: p.cfg.LauncherPath})
		if err != nil {
			return fmt.Errorf("stack: sandbox provider for hooks: %w", err)
		}
		out, err := os.MkdirTemp("", "dsh-stack-hooks-")
		if err != nil {
			return fmt.Errorf("stack: hook output directory: %w", err)
		}
		p.closers = append(p.closers, func() error { return os.RemoveAll(out) })
		for _, d := range hooks.Dialects {
			loaded := false
			b, err := hooks.Load(d, hooks.Options{
				ConfigPath: "./" + d.File, BaseDir: p.cfg.HooksDir, Strict: p.cfg.HooksStrict,
				Runtime: hooks.Runtime{
					Sandbox:  sandbox.Policy{Mode: p.cfg.Mode, WorkspaceRoot: p.cfg.HooksDir},
					Confiner: provider, DefaultDir: p.cfg.HooksDir, OutputDir: out,
				},
				// Lines logged while calls run; the load-time ones are in hookReports.
				Logf: func(line string) {
					if loaded {
						p.warn(line)
					}
				},
			})
			if err != nil {
				return fmt.Errorf("stack: %w", err)
			}
			loaded = true
			b.Register(p.reg)
			st := b.Status()
			p.hookLines = append(p.hookLines, st.Problems()...)
			if st.Err == nil {
				p.hookLines = append(p.hookLines, b.Warnings()...) // skipped hooks, in upstream's words
			}
		}
		return nil
	})
}
