package stack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/dshsim/dshsim/attachment"
	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/hooks"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/autoreview"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/repeat"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/spill"
	"github.com/dshsim/dshsim/stack/subagents"
	"github.com/dshsim/dshsim/tools/cordis/dynamic"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/skill"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Approval policies (VERBATIM values of approval/policy).
const (
	ApprovalAsk   = "ask"
	ApprovalNever = "never"
)

// Answerer answers one approval prompt (the user, or a constructed one).
type Answerer func(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error)

// Stack is one composed stack bound to one session: everything [New]
// composed (compose.go).
type Stack struct {
	cfg Config
	log *session.Log
	reg *pipeline.Registry
	policyParts
	toolParts
	closers []func() error

	mu       sync.Mutex
	warnings []string
	// regs are the registrations of the registered tools, in registration
	// order, a tool registered in several scopes once (registerIn).
	regs []toolreg.Tool

	// hookLines are the hook configs' load-time reports (addHooks).
	hookLines []string
	// children is the delegation runtime (package stack/subagents):
	// Delegate, and the children of Config.Subagents.
	children *subagents.Runtime
	// bridges are the hook bridges in registration order (addHooks).
	bridges []*hooks.Bridge
	// reminder is the repeated-call reminder (addReminder).
	reminder *repeat.Reminder
}

// policyParts are the stack's policy: approval, resolver, escalation, scopes, Auto review.
type policyParts struct {
	approver *approval.Service
	resolver *policy.Resolver
	escalate escalation.Func
	standing *pipeline.Scope  // the agent preset's standing scope
	agent    *pipeline.Agent  // the session's agent, under standing
	review   *autoreview.Gate // Auto review (registers nothing when off)
}

// toolParts are what the tools share: spill, the confiner, the jobs, the stores.
type toolParts struct {
	obs         *fsobserve.Observations // the file tools' and the editor's read-before-write record
	spill       *spill.Policy
	confiner    *chain.Confiner   // bash's (bashTools), nil until composed
	jobs        *jobs.Registry    // the background jobs (bashTools)
	skills      *skill.Config     // the skill catalog (skillTool), nil when off
	attachments *attachment.Store // the image store (fileTools), nil when off
	spillStore  *spill.Store      // spill's store, for the search tools' saved results
	served      []string          // the tools whose bodies are served (add)
	composed    []string          // every tool a line constructed, those left out too (add)
	dynamic     *dynamic.Host     // the dynamic Cordis packages (dynamicHost), nil until composed
}

// New validates cfg and composes the stack (compose.go).
func New(cfg Config) (*Stack, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	if cfg.Bash.Timeout == 0 {
		cfg.Bash.Timeout = 60 * time.Second
	}
	return compose(cfg, &pipeline.Agent{ID: "root", Session: cfg.Log})
}

func validate(cfg Config) error {
	var errs []error
	if !filepath.IsAbs(cfg.Workspace) {
		errs = append(errs, fmt.Errorf("stack: workspace %q must be an absolute path", cfg.Workspace))
	}
	if cfg.Log == nil {
		errs = append(errs, errors.New("stack: a session log is required"))
	}
	if _, err := sandbox.ParseMode(string(cfg.Mode)); err != nil {
		errs = append(errs, fmt.Errorf("stack: %w", err))
	}
	switch cfg.Approval {
	case ApprovalAsk:
		if cfg.Answer == nil {
			errs = append(errs, errors.New("stack: approval policy ask needs an answerer"))
		}
	case ApprovalNever:
		if cfg.AutoReview.Enabled {
			errs = append(errs, errors.New("stack: auto review needs approval policy ask (never rejects every ask before any answerer, the reviewer included)"))
		}
	default:
		errs = append(errs, fmt.Errorf("stack: unknown approval policy %q (want ask or never)", cfg.Approval))
	}
	if cfg.Spill.MaxInlineBytes < 0 {
		errs = append(errs, fmt.Errorf("stack: spill cap must be >= 0, got %d", cfg.Spill.MaxInlineBytes))
	}
	if err := validateToolsMode(cfg.ToolsMode); err != nil {
		errs = append(errs, err)
	}
	if cfg.Spill.MaxInlineBytes > 0 && !filepath.IsAbs(cfg.Spill.Root) {
		errs = append(errs, fmt.Errorf("stack: spill root %q must be an absolute path", cfg.Spill.Root))
	}
	if cfg.Jobs.MaxConcurrentPerOwner < 0 {
		errs = append(errs, fmt.Errorf("stack: the job admission bound must be >= 1, got %d", cfg.Jobs.MaxConcurrentPerOwner))
	}
	if cfg.PersistentShell != nil && !cfg.Without.Bash {
		errs = append(errs, errors.New("stack: the persistent shell takes bash's name: leave the one-shot bash out (Without.Bash)"))
	}
	if cfg.Without.Policy && cfg.Mode != sandbox.DangerFullAccess {
		errs = append(errs, fmt.Errorf("stack: a composition without the sandbox policy runs unconfined: its mode must be %s, got %s", sandbox.DangerFullAccess, cfg.Mode))
	}
	return errors.Join(errs...)
}

// Agent returns the agent every call runs for (its session is the log).
func (s *Stack) Agent() *pipeline.Agent { return s.agent }

// RuntimeContext renders the runtime-context message from the session log.
func (s *Stack) RuntimeContext(ctx context.Context) (RuntimeContext, error) {
	return s.contextOf(s.log)
}

// SyncContext appends the runtime-context message to the log when its text
// differs from the last one there (the real stack's per-request step) and
// returns the appended event, or nil.
func (s *Stack) SyncContext(ctx context.Context) (*session.Event, error) {
	if s.cfg.Without.Policy {
		return nil, nil // no policy plugins: no runtime context
	}
	return s.resolver.SyncContext(s.log)
}

// PendingContext returns the runtime-context message a step would enter,
// or nil when its text is the last one logged (upstream projects it at each
// pre-step and the agent loop logs it among the step's messages).
func (s *Stack) PendingContext(ctx context.Context) (*policy.SnapshotMessage, error) {
	if s.cfg.Without.Policy {
		return nil, nil // no policy plugins: no runtime context
	}
	return s.resolver.PendingContext(s.log)
}

// SwitchPreset is a user's /permission switch to the preset name, as the
// web app's command writes it: permission/preset, sandbox/mode and
// approval/policy, each only when it changes, and no approval change
// notice (the next step's runtime context states the policy). It returns
// the appended events; the next call is confined by the mode in force.
func (s *Stack) SwitchPreset(name string) ([]session.Event, error) {
	if s.cfg.Without.Policy {
		return nil, fmt.Errorf("stack: /permission %s: the composition has no sandbox-policy plugins", name)
	}
	return s.resolver.SwitchPreset(s.log, name, nil)
}

// Backend returns the sandbox backend a confined call gets (bwrap,
// landlock-inproc, or landlock when the runner is the fallback) and its
// enforcement (running the selection if no call did yet), or "" when no
// backend is usable or no confiner is composed.
func (s *Stack) Backend() (string, sandbox.Enforcement) {
	if s.confiner == nil {
		return "", ""
	}
	return s.confiner.Selected()
}

// Confiner is the confiner bash, background jobs and run_code's Node child
// are confined by (nil before composition): the platform chain with the
// in-process Landlock path.
func (s *Stack) Confiner() *chain.Confiner { return s.confiner }

// Tools returns the registered tool names in registration order.
func (s *Stack) Tools() []string {
	var names []string
	for _, t := range s.reg.Tools() {
		names = append(names, t.Name)
	}
	return names
}

// PromptSection is one tool-owned section of the system prompt: Name (e.g.
// "tool:bash"), Order (upstream's order number) and the VERBATIM Text.
type PromptSection = toolreg.Section

// PromptSections returns the system-prompt sections the stack owns for the
// session's agent (the persona and the rest are the application's): each
// visible tool's and the tools mode's (run_code's tools:code-only and
// tools:sdk, or upstream's missing-runtime error without a runtime).
func (s *Stack) PromptSections() ([]PromptSection, error) { return s.promptSections(s.agent) }

// promptSections are agent's sections, read from the registrations, by
// order, equal orders in registration order.
func (s *Stack) promptSections(agent *pipeline.Agent) ([]PromptSection, error) {
	visible := s.reg.ToolsFor(agent)
	seen := map[string]bool{}
	for _, t := range visible {
		seen[t.Name] = true
	}
	s.mu.Lock()
	regs := slices.Clone(s.regs)
	s.mu.Unlock()
	var out []PromptSection
	for _, t := range regs {
		if t.Section != nil && seen[t.Name()] {
			out = append(out, *t.Section)
		}
		if t.SectionsFor != nil {
			secs, err := t.SectionsFor(visible)
			if err != nil {
				return nil, err
			}
			out = append(out, secs...)
		}
	}
	slices.SortStableFunc(out, func(a, b PromptSection) int { return cmp.Compare(a.Order, b.Order) })
	return out, nil
}

// Definitions returns the registered tools in registration order: name,
// description, parameters and whether a call may run in a parallel pool.
// What the model is offered is [Stack.WireTools].
func (s *Stack) Definitions() []pipeline.Tool { return s.reg.Tools() }

// Warnings returns the warnings the stack logged (spill store failures and the like).
func (s *Stack) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

// warn records a warning (the tools' and spill's Warn).
func (s *Stack) warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warnings = append(s.warnings, msg)
}

// HookReports returns what a user must be told about the hook configs: a
// rejected file (file, line, field), hooks skipped or not run here, and
// anything upstream ignores silently. Empty when hooks are off or clean.
func (s *Stack) HookReports() []string {
	return append([]string(nil), s.hookLines...)
}

// RunningJobPIDs returns the session leaders of the background jobs still
// running (tools/jobs [jobs.Registry.RunningPIDs]), e.g. for a constructed
// model that lets them progress before it answers.
func (s *Stack) RunningJobPIDs() []int {
	if r := s.jobs; r != nil {
		return r.RunningPIDs()
	}
	return nil
}

// Execute runs one tool call of the session's agent through the pipeline
// and returns its result.
func (s *Stack) Execute(ctx context.Context, callID, name string, args json.RawMessage) pipeline.Result {
	return s.execute(ctx, s.agent, callID, name, args)
}

// Yields reports whether a call of tool name with args awaits I/O in
// upstream's host, so that the host observes its background jobs meanwhile:
// the rule of the tool's registration (a name no tool has yields). Only the
// job tools and a background bash start do not yield.
func (s *Stack) Yields(name string, args json.RawMessage) bool {
	t, ok := s.registration(name)
	return !ok || t.Yield(args)
}

// Close releases the stack (background jobs, spill store handles).
func (s *Stack) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	return errors.Join(errs...)
}

// contextOf renders the runtime context of log with extra sections.
func (s *Stack) contextOf(log *session.Log, extra ...policy.Section) (RuntimeContext, error) {
	events, err := log.Events()
	if err != nil {
		return RuntimeContext{}, err
	}
	secs, text, err := s.resolver.Context(log.Header(), events, extra...)
	if err != nil {
		return RuntimeContext{}, err
	}
	return subagents.NewRuntimeContext(text, secs), nil
}
