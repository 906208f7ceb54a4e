package stack

import (
	"context"
	"fmt"
	"slices"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/spill"
	"github.com/dshsim/dshsim/stack/subagents"
	"github.com/dshsim/dshsim/tools/bash"
	"github.com/dshsim/dshsim/tools/cordis"
	"github.com/dshsim/dshsim/tools/cordis/dynamic"
	"github.com/dshsim/dshsim/tools/goal"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/planmode"
	"github.com/dshsim/dshsim/tools/served"
	"github.com/dshsim/dshsim/tools/terminal"
	"github.com/dshsim/dshsim/tools/todo"
	"github.com/dshsim/dshsim/tools/toolreg"
	"github.com/dshsim/dshsim/tools/web"
)

// compose builds the stack, each piece from the ones before it, in this
// order: the policy resolver, the approval service and its answerer, the
// pipeline registry and escalation, the session's agent under its preset
// (with Auto review), the delegation runtime, the spill policy; then the
// tools, one line of the composition at a time (addTools); then the
// listeners around them, inside Auto review's: the repeated-call reminder,
// then the hook bridges (the reminder's message comes before theirs); last,
// spill's listener, the outermost. A failure releases what was composed so
// far.
func compose(cfg Config, agent *pipeline.Agent) (*Stack, error) {
	s := &Stack{cfg: cfg, log: cfg.Log}
	var err error
	ap := approval.Policy(cfg.Approval)
	if s.resolver, err = policy.NewResolver(policy.Config{DefaultMode: cfg.Mode, Root: cfg.Workspace, Approval: ap, NoApproval: cfg.Without.Approval}); err != nil {
		return nil, fmt.Errorf("stack: policy resolver: %w", err)
	}
	if s.approver, err = approval.New(approval.WithPolicy(ap)); err != nil {
		return nil, fmt.Errorf("stack: approval service: %w", err)
	}
	if cfg.Answer != nil {
		answer := cfg.Answer
		s.approver.Answer(func(ctx context.Context, req *pipeline.ApprovalRequest, _ func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			return answer(ctx, *req)
		})
	}
	s.reg = pipeline.NewRegistry()
	if cfg.Without.Approval {
		s.escalate = escalation.New(nil) // no approval service: an escalation is refused
	} else {
		s.reg.SetApprover(s.approver)
		s.escalate = escalation.New(s.approver)
	}
	if err := s.scopeAgent(agent); err != nil {
		return nil, err
	}
	if s.children, err = subagents.New(host{s}, cfg.AgentPreset, cfg.Subagents); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	if cfg.Spill.MaxInlineBytes > 0 {
		store, err := spill.NewStore(cfg.Spill.Root)
		if err != nil {
			return nil, fmt.Errorf("stack: spill store: %w", err)
		}
		s.spillStore = store
		if s.spill, err = spill.New(spill.ByteConfig(cfg.Spill.MaxInlineBytes), store, s.warn); err != nil {
			return nil, fmt.Errorf("stack: spill policy: %w", err)
		}
	}
	for _, add := range []func() error{s.addTools, s.addReminder, s.addHooks} {
		if err := add(); err != nil {
			s.Close()
			return nil, err
		}
	}
	if s.spill != nil {
		// Outermost post-execute listener: it bounds whatever the inner ones produced.
		s.spill.Hook(s.reg)
	}
	return s, nil
}

// line is one line of the composition: a constructor of registrations
// (one tool, or the tools of one package that share it) and whether the
// configuration composes it.
type line struct {
	on bool
	// extra marks the tools beyond the safety stack: Config.Served may
	// serve their bodies from a recording.
	extra bool
	// own marks a line Config.Without does not apply to (the persistent
	// shell takes the name of the bash it leaves out).
	own   bool
	tools toolreg.Constructor
}

// lines is the composition, in registration order: bash and the job tools
// (the sandbox confiner comes from here), run_code confined by that
// confiner, the file tools, session query, delegation (the runtime and its
// tools, ask_user_question, the workflow tool), then the tools beyond the
// safety stack and last the deployment's own (Config.Tools).
// Equal prompt-section orders keep this order: at 115 the workflow's
// section before cordis', as the advanced recordings show upstream's; at
// 105 bash's, then pwsh's, then the terminal's.
func (s *Stack) lines() []line {
	c := s.cfg
	out := []line{
		{on: true, tools: s.bashTools},
		{on: c.ToolsMode == ToolsCode || c.ToolsMode == ToolsBoth, tools: s.codeTool},
		{on: true, tools: s.fileTools},
		{on: c.SessionQuery != nil, tools: s.sessionQueryTools},
		{on: c.Subagents != nil, tools: s.delegationTools},
		{on: c.Subagents != nil && c.Subagents.AskUser, tools: s.askUserTool},
		{on: c.Subagents != nil && c.Subagents.Workflow, tools: s.workflowTool},
		{on: c.Todo, extra: true, tools: toolreg.Bind(todo.New, todo.Config{AllowParallelInProgress: !c.TodoOneInProgress})},
		{on: c.Skills != nil, extra: true, tools: s.skillTool},
		{on: c.FileSearch != nil, extra: true, tools: s.searchTools},
		{on: c.Pwsh != nil, extra: true, tools: s.pwshTool},
		{on: c.Terminal != nil, extra: true, tools: s.terminalTools},
		{on: c.LSP != nil, extra: true, tools: s.lspTool},
		{on: c.Cordis, extra: true, tools: toolreg.Bind(cordis.New, cordis.Config{})},
		{on: c.WebFetch, extra: true, tools: toolreg.Bind(web.New, web.Config{})},
		{on: c.PersistentShell != nil, own: true, tools: s.persistentShellTool},
		{on: c.Editor != nil, tools: s.editorTool},
		{on: c.Goals != nil, extra: true, tools: toolreg.Bind(goal.New, goal.Config{Goals: c.Goals})},
		{on: c.Ralph && c.Subagents != nil, extra: true, tools: s.ralphTool},
		{on: c.PlanMode != nil, extra: true, tools: func() ([]toolreg.Tool, error) { p := *c.PlanMode; p.Log = s.log; return planmode.New(p) }},
	}
	for _, t := range c.Tools {
		out = append(out, line{on: true, extra: true, tools: t})
	}
	return out
}

// addTools registers the configured lines' tools, in order: each line's
// Close is kept for Close, and each registration goes through add.
func (s *Stack) addTools() error {
	for _, l := range s.lines() {
		if !l.on {
			continue
		}
		regs, err := l.tools()
		if err != nil {
			return fmt.Errorf("stack: %w", err)
		}
		for _, t := range regs {
			if t.Close != nil {
				s.closers = append(s.closers, t.Close)
			}
		}
		for _, t := range regs {
			if err := s.add(t, l.extra, l.own); err != nil {
				return err
			}
		}
	}
	return nil
}

// add registers t: never when Config.Served names a tool of the safety
// stack (the composition fails), not when Config.Without leaves it out,
// with its body served when it is beyond the safety stack and Config.Served
// names it or it is unhosted.
func (s *Stack) add(t toolreg.Tool, extra, own bool) error {
	sv := s.cfg.Served
	named := sv != nil && slices.Contains(sv.Tools, t.Name())
	if named && t.SafetyStack {
		return fmt.Errorf("stack: served %s: %w", t.Name(), served.ErrSafetyStack)
	}
	s.composed = append(s.composed, t.Name()) // a dynamic tool takes no name of the composition's
	if !own && s.omits(t.Name()) {
		return nil
	}
	if extra && sv != nil && (named || t.Unhosted) {
		w, err := served.Wrap(t, sv.Source)
		if err != nil {
			return fmt.Errorf("stack: %w", err)
		}
		t = w
		s.served = append(s.served, t.Name())
	}
	if s.cfg.Cordis { // the tools a running Cordis package registers, confined as run_code's programs
		if s.dynamic == nil {
			taken := func() []string { return slices.Concat(s.composed, subagents.Reserved) }
			s.dynamic = dynamic.New(s.cfg.CodeRuntime, s.policyFor, s.confiner, s.reg.In(nil).Register, taken)
		}
		t = s.dynamic.Wrap(t)
	}
	return s.registerIn(s.reg.In(nil), t)
}

// omits reports whether Config.Without leaves the tool out.
func (s *Stack) omits(name string) bool {
	w := s.cfg.Without
	switch name {
	case bash.Name:
		return w.Bash
	case jobs.OutputName, jobs.KillName, jobs.ListName:
		return w.JobTools
	case "read", "write", "edit":
		return w.FileTools
	}
	return false
}

// registerIn registers t's definition in sc and keeps the registration,
// once by name, for its prompt section and yield rule; the error names the
// tool.
func (s *Stack) registerIn(sc pipeline.Scoped, t toolreg.Tool) error {
	if _, err := sc.Register(t.Def); err != nil {
		return fmt.Errorf("stack: register %s: %w", t.Name(), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.ContainsFunc(s.regs, func(r toolreg.Tool) bool { return r.Name() == t.Name() }) {
		s.regs = append(s.regs, t)
	}
	return nil
}

// registration is the kept registration of the tool named name.
func (s *Stack) registration(name string) (toolreg.Tool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.regs, func(t toolreg.Tool) bool { return t.Name() == name })
	if i < 0 {
		return toolreg.Tool{}, false
	}
	return s.regs[i], true
}

// terminalTools are the terminal tools (Config.Terminal).
func (s *Stack) terminalTools() ([]toolreg.Tool, error) {
	return terminal.New(terminal.Config{MaxResultBytes: s.cfg.Terminal.MaxResultBytes})
}
