package stack

import (
	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/tools/editor"
	"github.com/dshsim/dshsim/tools/shell"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// persistentShellTool composes the persistent bash: the whole shell
// confined by the stack's confiner under the call's policy, as bash's
// commands are (no sandbox policy composed: unconfined, as bash).
func (s *Stack) persistentShellTool() ([]toolreg.Tool, error) {
	c := s.cfg.PersistentShell
	cfg := shell.Config{TimeoutMs: c.TimeoutMs, Description: c.Description, Policy: s.policyFor, Confiner: s.confiner}
	if s.cfg.Without.Policy {
		cfg.Policy, cfg.Confiner = nil, nil
	}
	return shell.New(cfg)
}

// editorTool composes str_replace_editor on the local provider, with the
// file tools' observations (one read-before-write record per session;
// none when the composition mounts it unobserved) and their fence (no
// sandbox policy composed: not fenced).
func (s *Stack) editorTool() ([]toolreg.Tool, error) {
	c := s.cfg.Editor
	local, err := fsobserve.NewLocal(fsobserve.WithCwd(s.cfg.Workspace))
	if err != nil {
		return nil, err
	}
	cfg := editor.Config{FS: local, Observations: s.observations(), Policy: s.policyFor, MaxOutputChars: c.MaxOutputChars, Description: c.Description}
	if s.cfg.Without.Policy {
		cfg.Policy = nil
	}
	if c.Unobserved {
		cfg.Observations = nil
	}
	return editor.New(cfg)
}

// observations is the composition's one read-before-write record, shared
// by the file tools and the editor.
func (s *Stack) observations() *fsobserve.Observations {
	if s.obs == nil {
		s.obs = fsobserve.NewObservations()
	}
	return s.obs
}
