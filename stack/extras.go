package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dshsim/dshsim/attachment"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/fs"
	"github.com/dshsim/dshsim/tools/goal"
	"github.com/dshsim/dshsim/tools/lsp"
	"github.com/dshsim/dshsim/tools/planmode"
	"github.com/dshsim/dshsim/tools/pwsh"
	"github.com/dshsim/dshsim/tools/search"
	"github.com/dshsim/dshsim/tools/skill"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// skillTool composes the skill tool over the skill catalog (PendingCatalog).
func (s *Stack) skillTool() ([]toolreg.Tool, error) {
	s.skills = &skill.Config{DshHome: s.cfg.Skills.DshHome, AgentsHome: s.cfg.Skills.AgentsHome, Warn: s.warn}
	return skill.New(*s.skills)
}

// searchTools composes glob and grep; a capped result is saved in spill's
// store when spill is on.
func (s *Stack) searchTools() ([]toolreg.Tool, error) {
	fc := s.cfg.FileSearch
	cfg := search.Config{Rg: fc.Rg, SampleOverCapGlobResults: fc.SampleOverCapGlobResults, GlobMaxResults: fc.GlobMaxResults, GrepMaxMatches: fc.GrepMaxMatches, DefaultWorkdir: s.cfg.Workspace}
	if s.spillStore != nil {
		store := s.spillStore
		cfg.Save = func(call *pipeline.Call, name, content string) (search.Saved, bool) {
			if call.SessionID() == "" {
				return search.Saved{}, false
			}
			sv, err := store.Save(call.SessionID(), name, content)
			if err != nil {
				s.warn(fmt.Sprintf("tool-fs-search: saveText failed for %s: %v; complete result not saved", call.Name(), err))
				return search.Saved{}, false
			}
			return search.Saved{Locator: sv.Locator, RetrievalHint: sv.RetrievalHint}, true
		}
	}
	return search.New(cfg)
}

// lspTool composes lsp; its servers run confined like a workspace-write
// command in the workspace (a recording's fixture server is code the
// recording brought), by bash's provider: the argv contract (the runner
// under Landlock), since the lsp client starts its servers itself.
func (s *Stack) lspTool() ([]toolreg.Tool, error) {
	if s.confiner == nil {
		return nil, errors.New("lsp: no sandbox confiner is composed")
	}
	provider, ws := s.confiner.Provider(), s.cfg.Workspace
	return lsp.New(lsp.Config{Workspace: ws, Servers: s.cfg.LSP.Servers, MaxLocations: s.cfg.LSP.MaxLocations, Timeout: 30 * time.Second,
		Confine: func(ctx context.Context, argv []string) ([]string, []*os.File, error) {
			c, err := provider.Confine(ctx, argv, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
			if err != nil {
				return nil, nil, err
			}
			argv, files := c.Inherit(nil) // bwrap binds the workspace through a descriptor the server inherits
			return argv, files, nil
		}})
}

// pwshTool composes pwsh: its real body where PowerShell runs, else (it is
// unhosted) served from the recording when one is given.
func (s *Stack) pwshTool() ([]toolreg.Tool, error) {
	return pwsh.New(pwsh.Config{Persistent: s.cfg.Pwsh.Persistent, Workspace: s.cfg.Workspace})
}

// SafetyStack returns the registered tools of the safety stack (their
// registrations say so: toolreg.Tool.SafetyStack), in registration order:
// tools whose bodies a recording can never serve.
func (s *Stack) SafetyStack() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, t := range s.regs {
		if t.SafetyStack {
			out = append(out, t.Name())
		}
	}
	return out
}

// Served returns the tools whose bodies are served from the recording, in
// registration order.
func (s *Stack) Served() []string { return append([]string(nil), s.served...) }

// imageConfig is read_image's configuration (nil when images are off).
func (s *Stack) imageConfig() (*fs.ImageConfig, error) {
	ic := s.cfg.Images
	if ic == nil {
		return nil, nil
	}
	store, err := attachment.New(ic.DshHome, ic.Limits)
	if err != nil {
		return nil, fmt.Errorf("attachment store: %w", err)
	}
	s.attachments = store
	model, capable := ic.Model, ic.Capable()
	return &fs.ImageConfig{Store: store, Route: func(*pipeline.Call) (fs.Route, bool) {
		return fs.Route{Model: model, Image: capable}, model != ""
	}}, nil
}

// Attachments returns the attachment store (nil when images are off).
func (s *Stack) Attachments() *attachment.Store { return s.attachments }

// ImageInput reports whether the session's model declares image input
// (inline image prompts are advertised only then, and only with a store).
func (s *Stack) ImageInput() bool { return s.cfg.Images.Capable() }

// ImageModel is the model route read_image and inline image prompts check
// ("" when images are off or the route is unknown).
func (s *Stack) ImageModel() string { return s.cfg.Images.Route() }

// CatalogMessage is the skill catalog's user message.
type CatalogMessage = skill.Message

// PendingCatalog returns the skill catalog message a step would enter
// (upstream's pre-step listener of tool-skill): the catalog when the
// session's skills differ from the latest catalog in the log, an update
// when one was published before; nil when nothing changed or skills are off.
func (s *Stack) PendingCatalog(ctx context.Context) (*CatalogMessage, error) {
	return s.pendingCatalog(s.log)
}

// pendingCatalog is the catalog message a step of the agent whose log is
// log would enter (every agent's pre-step runs the listener, a child's too).
func (s *Stack) pendingCatalog(log *session.Log) (*CatalogMessage, error) {
	if s.skills == nil {
		return nil, nil
	}
	evs, err := log.Events()
	if err != nil {
		return nil, err
	}
	text, src, ok := s.skills.NextCatalog(log.Header().Cwd, skill.PublishedIn(evs))
	if !ok {
		return nil, nil
	}
	return &CatalogMessage{Content: []pipeline.Block{pipeline.TextBlock(text)}, Source: src, Role: "user", ID: approval.NewUUID()}, nil
}

// SyncCatalog is [Stack.PendingCatalog] that appends the message to the
// log and returns the appended event, or nil.
func (s *Stack) SyncCatalog(ctx context.Context) (*session.Event, error) {
	m, err := s.PendingCatalog(ctx)
	if err != nil || m == nil {
		return nil, err
	}
	e, err := s.log.AppendWith(session.KindUserMessage, *m, session.AppendOptions{SurfaceOp: "append"})
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// PlanMode is the composed plan mode (nil: none), which a user's /plan selects.
func (s *Stack) PlanMode() *planmode.Config { return s.cfg.PlanMode }

// Goals is the goal domain the goal tools act on (nil: none composed); a
// goal-round driver reads it.
func (s *Stack) Goals() *goal.Service { return s.cfg.Goals }
