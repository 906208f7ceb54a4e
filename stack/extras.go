package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dshsim/dshsim/attachment"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/cordis"
	"github.com/dshsim/dshsim/tools/fs"
	"github.com/dshsim/dshsim/tools/lsp"
	"github.com/dshsim/dshsim/tools/pwsh"
	"github.com/dshsim/dshsim/tools/search"
	"github.com/dshsim/dshsim/tools/served"
	"github.com/dshsim/dshsim/tools/skill"
	"github.com/dshsim/dshsim/tools/terminal"
	"github.com/dshsim/dshsim/tools/todo"
	"github.com/dshsim/dshsim/tools/web"
)

// Without leaves areas of upstream's default profile out, as upstream's
// standalone overlays do.
type Without struct {
	// Bash leaves the bash tool out (the job registry stays for the others).
	Bash bool
	// JobTools leaves job_output, job_kill and job_list out.
	JobTools bool
	// FileTools leaves read, write and edit out.
	FileTools bool
	// Policy composes no sandbox-policy and approval plugins: bash runs
	// unconfined (a non-confining executor, no escalation fields) and no
	// runtime-context message is ever entered. The mode must be
	// danger-full-access.
	Policy bool
}

// ImagesConfig mounts the attachment store and read_image.
type ImagesConfig struct {
	// DshHome is DSH_HOME: the store lives under <DshHome>/attachments/v1.
	DshHome string
	// Limits are the store's limits (zero fields: upstream's defaults).
	Limits attachment.Limits
	// Model is the session's model route ("": not resolvable) and
	// ImageModels the catalog's models that declare image input.
	Model       string
	ImageModels []string
}

// SkillsConfig locates the skills (DSH_HOME, DSH_AGENTS_HOME).
type SkillsConfig struct {
	DshHome, AgentsHome string
}

// FileSearchConfig configures glob and grep (zero caps: upstream's defaults).
type FileSearchConfig struct {
	SampleOverCapGlobResults bool
	GlobMaxResults           int
	GrepMaxMatches           int
}

// TerminalConfig configures the terminal tools.
type TerminalConfig struct {
	MaxResultBytes int
}

// LSPConfig configures the lsp tool.
type LSPConfig struct {
	Servers      []lsp.Server
	MaxLocations int
}

// PwshConfig configures the pwsh tool.
type PwshConfig struct {
	Persistent bool
}

// ServedConfig serves tool bodies from a recording.
type ServedConfig struct {
	// Tools are served always (never a tool of the safety stack).
	Tools []string
	// Source answers each served call (its recorded result).
	Source served.Source
}

// validateExtras refuses a served body for the safety stack and a
// standalone composition under a confined mode.
func validateExtras(cfg Config) []error {
	var errs []error
	if cfg.Served != nil {
		for _, n := range cfg.Served.Tools {
			if served.Refuses(n) {
				errs = append(errs, fmt.Errorf("stack: served %s: %w", n, served.ErrSafetyStack))
			}
		}
	}
	if cfg.Without.Policy && cfg.Mode != sandbox.DangerFullAccess {
		errs = append(errs, fmt.Errorf("stack: a composition without the sandbox policy runs unconfined: its mode must be %s, got %s", sandbox.DangerFullAccess, cfg.Mode))
	}
	return errs
}

// addExtras composes the tools beyond the safety stack, each area only
// when configured, in this order: todo_write, skill, glob and grep, the
// terminal tools, lsp, pwsh, the cordis tools, web_fetch (read_image
// is the file tools', addFS).
func (s *Stack) addExtras() error {
	for _, add := range []func() error{s.addTodo, s.addSkills, s.addSearch, s.addTerminal, s.addLSP, s.addPwsh, s.addCordis, s.addWebFetch} {
		if err := add(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stack) addTodo() error {
	if !s.cfg.Todo {
		return nil
	}
	return s.registerExtra(todo.Tool(todo.Config{AllowParallelInProgress: true}))
}

func (s *Stack) addSkills() error {
	if s.cfg.Skills == nil {
		return nil
	}
	s.skills = &skill.Config{DshHome: s.cfg.Skills.DshHome, AgentsHome: s.cfg.Skills.AgentsHome, Warn: s.warn}
	return s.registerExtra(skill.Tool(*s.skills))
}

func (s *Stack) addSearch() error {
	fc := s.cfg.FileSearch
	if fc == nil {
		return nil
	}
	cfg := search.Config{SampleOverCapGlobResults: fc.SampleOverCapGlobResults, GlobMaxResults: fc.GlobMaxResults, GrepMaxMatches: fc.GrepMaxMatches, DefaultWorkdir: s.cfg.Workspace}
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
	tools, err := search.Tools(cfg)
	if err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	return s.registerExtra(tools...)
}

func (s *Stack) addTerminal() error {
	if s.cfg.Terminal == nil {
		return nil
	}
	return s.registerExtra(terminal.New(terminal.Config{MaxResultBytes: s.cfg.Terminal.MaxResultBytes}).Tools()...)
}

// addLSP composes lsp; its servers run confined like a workspace-write
// command in the workspace (a recording's fixture server is code the
// recording brought), by bash's provider: the argv contract (the runner
// under Landlock), since the lsp client starts its servers itself.
func (s *Stack) addLSP() error {
	lc := s.cfg.LSP
	if lc == nil {
		return nil
	}
	var provider *sandbox.Provider
	if s.confiner != nil {
		provider = s.confiner.Provider()
	}
	ws := s.cfg.Workspace
	tool, err := lsp.New(lsp.Config{Workspace: ws, Servers: lc.Servers, MaxLocations: lc.MaxLocations, Timeout: 30 * time.Second,
		Confine: func(ctx context.Context, argv []string) ([]string, error) {
			if provider == nil {
				return nil, errors.New("no sandbox provider is composed")
			}
			c, err := provider.Confine(ctx, argv, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
			return c.Argv, err
		}})
	if err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	s.closers = append(s.closers, tool.Close)
	return s.registerExtra(tool.Definition())
}

// addPwsh composes pwsh: its real body where PowerShell runs, else served
// from the recording when one is given.
func (s *Stack) addPwsh() error {
	pc := s.cfg.Pwsh
	if pc == nil {
		return nil
	}
	tool := pwsh.Tool(pwsh.Config{Persistent: pc.Persistent, Workspace: s.cfg.Workspace})
	if !pwsh.Available("") && s.cfg.Served != nil {
		return s.registerServed(tool)
	}
	return s.registerExtra(tool)
}

// addCordis composes the cordis tools, each served from the recording when
// one is given (upstream's Cordis host, which their bodies need, never runs
// here), else refusing.
func (s *Stack) addCordis() error {
	if !s.cfg.Cordis {
		return nil
	}
	tools := cordis.Tools()
	if s.cfg.Served == nil {
		return s.register(tools...)
	}
	for _, t := range tools {
		if err := s.registerServed(t); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stack) addWebFetch() error {
	if !s.cfg.WebFetch {
		return nil
	}
	return s.registerExtra(web.Fetch())
}

// registerExtra registers tools, each with its body served when
// Config.Served names it.
func (s *Stack) registerExtra(tools ...pipeline.Tool) error {
	for _, t := range tools {
		if s.cfg.Served != nil && slices.Contains(s.cfg.Served.Tools, t.Name) {
			if err := s.registerServed(t); err != nil {
				return err
			}
			continue
		}
		if err := s.register(t); err != nil {
			return err
		}
	}
	return nil
}

// registerServed registers t with its body served from the recording.
func (s *Stack) registerServed(t pipeline.Tool) error {
	var src served.Source
	if s.cfg.Served != nil {
		src = s.cfg.Served.Source
	}
	w, err := served.Wrap(t, src)
	if err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	s.served = append(s.served, t.Name)
	return s.register(w)
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
		return nil, fmt.Errorf("stack: attachment store: %w", err)
	}
	s.attachments = store
	model, capable := ic.Model, slices.Contains(ic.ImageModels, ic.Model)
	return &fs.ImageConfig{Store: store, Route: func(*pipeline.Call) (fs.Route, bool) {
		return fs.Route{Model: model, Image: capable}, model != ""
	}}, nil
}

// Attachments returns the attachment store (nil when images are off).
func (s *Stack) Attachments() *attachment.Store { return s.attachments }

// ImageInput reports whether the session's model declares image input
// (inline image prompts are advertised only then, and only with a store).
func (s *Stack) ImageInput() bool {
	ic := s.cfg.Images
	return ic != nil && ic.Model != "" && slices.Contains(ic.ImageModels, ic.Model)
}

// ImageModel is the model route read_image and inline image prompts check
// ("" when images are off or the route is unknown).
func (s *Stack) ImageModel() string {
	if s.cfg.Images == nil {
		return ""
	}
	return s.cfg.Images.Model
}

// extraSections are the prompt sections of the extra tools composed.
func (s *Stack) extraSections(composed map[string]bool) []PromptSection {
	var out []PromptSection
	if composed[search.GlobName] {
		out = append(out, PromptSection{"tool:glob", 103, search.GlobSection(s.cfg.FileSearch.SampleOverCapGlobResults)})
	}
	if composed[search.GrepName] {
		out = append(out, PromptSection{"tool:grep", 104, search.GrepSection})
	}
	if composed[pwsh.Name] && !s.cfg.Pwsh.Persistent {
		out = append(out, PromptSection{"tool:pwsh", 105, pwsh.PromptSection})
	}
	if composed[terminal.OpenName] {
		out = append(out, PromptSection{"tool:terminal", 105, terminal.PromptSection})
	}
	if composed[web.FetchName] {
		out = append(out, PromptSection{"tool:web_fetch", 111, web.FetchSection})
	}
	if composed[lsp.Name] {
		out = append(out, PromptSection{"tool:lsp", 107, lsp.PromptSection})
	}
	if composed[cordis.DefineName] {
		out = append(out, PromptSection{"tool:cordis", cordis.PromptOrder, cordis.PromptSection})
	}
	return out
}

// CatalogMessage is the skill catalog's user message.
type CatalogMessage = pipeline.UserMessage[skill.CatalogSource]

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
	pub := skill.Published{}
	for _, e := range evs {
		if e.Type != session.KindUserMessage {
			continue
		}
		var d struct {
			Source skill.CatalogSource `json:"source"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Source.Kind == "skill-catalog" {
			pub = skill.Published{Any: true, Digest: skill.Digest(d.Source.Entries)}
		}
	}
	text, src, ok := s.skills.NextCatalog(log.Header().Cwd, pub)
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
