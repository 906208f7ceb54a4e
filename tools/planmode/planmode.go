package planmode

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/askuser"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// ExitName is the model-facing exit tool's name.
const ExitName = "exit_plan_mode"

// CommandName is the user's command (/plan).
const CommandName = "plan"

// The review question (VERBATIM).
const (
	ReviewID          = "plan-review"
	ApproveLabel      = "Approve"
	KeepPlanningLabel = "Keep planning"
	// Approved is the exit tool's result text on approval.
	Approved = "Plan approved — plan mode exited; carry out the plan starting with your next step."
)

// SectionName and SectionOrder place the deployment's guidance in the
// system prompt.
const (
	SectionName  = "plan:policy"
	SectionOrder = 50
)

const (
	exitDescription = "Use only in plan mode. Present your plan for the user's review and, on approval, leave plan mode. Send the COMPLETE plan as markdown, starting with a # heading that names it. The user may approve (carry out the plan from your next step) or keep planning — their feedback comes back in the tool result; revise and present again."
	exitParameters  = `{"type":"object","properties":{"plan":{"type":"string","description":"The complete plan, as markdown, starting with a # heading that names it."}},"required":["plan"]}`
	exitOutput      = `{"type":"object","additionalProperties":false,"properties":{"approved":{"type":"boolean","const":true}},"required":["approved"]}`
)

// Outcomes of a selection ([Service.Set]).
const (
	Committed = "committed" // appended now (no turn open)
	Queued    = "queued"    // pending until the next step
	Cancelled = "cancelled" // an opposite pending selection was cleared
	Noop      = "noop"      // already in that state, or pending it
)

// Fold is whether plan mode is active after events: the last plan/mode
// wins; none is inactive. A plan/mode whose active is not a boolean is an
// error naming its seq.
func Fold(events []session.Event) (bool, error) {
	active := false
	for _, e := range events {
		if e.Type != session.KindPlanMode {
			continue
		}
		var d struct {
			Active *bool `json:"active"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil || d.Active == nil {
			return false, &FoldError{Seq: e.Seq, Data: string(e.Data)}
		}
		active = *d.Active
	}
	return active, nil
}

// FoldError is a plan/mode event without a boolean active.
type FoldError struct {
	Seq  int64
	Data string
}

func (e *FoldError) Error() string {
	return "plan/mode at seq " + itoa(e.Seq) + " carries invalid active state: " + e.Data + "; expected a boolean"
}

// Service is the plan mode of a composition: its sessions' pending
// selections and the deployment's guidance.
type Service struct {
	// Section is the deployment's plan:policy text, in the prompt while
	// plan mode is active or selected ("": none).
	Section string

	mu      sync.Mutex
	pending map[*session.Log]intent
}

// intent is a selection awaiting the next step: the mode selected and
// whether its step narrates it (a user's selection does; an approved
// plan's exit does not, its result says so already).
type intent struct{ active, narrate bool }

func (s *Service) state(log *session.Log) (active bool, pending, has bool, err error) {
	evs, err := log.Events()
	if err != nil {
		return false, false, false, err
	}
	if active, err = Fold(evs); err != nil {
		return false, false, false, err
	}
	in, has := s.pending[log]
	return active, in.active, has, nil
}

// Active reports whether plan mode is in force in log.
func (s *Service) Active(log *session.Log) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, _, _, err := s.state(log)
	return a, err
}

// Set is a user's selection of plan mode, active or not, for log's
// session, as upstream's set: between turns (no open turn) the plan/mode
// is appended at once, with the user-switch notice ([Notice]) the caller
// queues for the agent's next step (nil: none); during a turn the
// selection waits for the next step ([Service.OnBoundary]), which
// narrates it.
func (s *Service) Set(log *session.Log, active bool) (string, *pipeline.ContextMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, pend, has, err := s.state(log)
	if err != nil {
		return "", nil, err
	}
	if has && pend == active || !has && cur == active {
		return Noop, nil, nil
	}
	evs, err := log.Events()
	if err != nil {
		return "", nil, err
	}
	if openTurn(evs) {
		s.setPending(log, intent{active: active, narrate: true})
		if cur == active {
			return Cancelled, nil, nil
		}
		return Queued, nil, nil
	}
	if cur == active {
		delete(s.pending, log)
		return Cancelled, nil, nil
	}
	if _, err := log.Append(session.KindPlanMode, map[string]bool{"active": active}); err != nil {
		return "", nil, err
	}
	delete(s.pending, log)
	evs, err = log.Events()
	if err != nil {
		return "", nil, err
	}
	notice, err := Notice(evs, active)
	return Committed, notice, err
}

func (s *Service) setPending(log *session.Log, in intent) {
	if s.pending == nil {
		s.pending = map[*session.Log]intent{}
	}
	s.pending[log] = in
}

// OnBoundary appends log's pending selection as the agent enters a step
// (before its step/start), unless it is already in force. It returns the
// user-switch notice the step enters after its other messages: for a
// user's selection ([Service.Set]) whose mode differs from the one the
// last request was assembled in ([Notice], computed before the append);
// never for an approved plan's exit; none without a pending selection.
func (s *Service) OnBoundary(log *session.Log) ([]pipeline.ContextMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, has := s.pending[log]
	if !has {
		return nil, nil
	}
	evs, err := log.Events()
	if err != nil {
		return nil, err
	}
	cur, err := Fold(evs)
	if err != nil {
		return nil, err
	}
	var out []pipeline.ContextMessage
	if in.narrate {
		n, err := Notice(evs, in.active)
		if err != nil {
			return nil, err
		}
		if n != nil {
			out = append(out, *n)
		}
	}
	delete(s.pending, log)
	if in.active == cur {
		return out, nil
	}
	if _, err := log.Append(session.KindPlanMode, map[string]bool{"active": in.active}); err != nil {
		return nil, err
	}
	return out, nil
}

// The user-switch notice (VERBATIM): a plugin message of plan-mode, form
// notice, its summary its text.
const (
	NoticePlugin = "plan-mode"
	NoticeForm   = "notice"
	NoticeOn     = "The user switched this session to plan mode."
	NoticeOff    = "The user switched this session back to the default mode."
)

// Notice is the user-switch notice for a switch to target after events,
// as upstream's narration: none before the first request/header (no
// request was ever assembled: the model has not been told a mode), none
// when the mode in force at the last request/header (the fold up to and
// including it) is target already; else the text of target's mode.
func Notice(events []session.Event, target bool) (*pipeline.ContextMessage, error) {
	last := -1
	for i, e := range events {
		if e.Type == session.KindRequestHeader {
			last = i
		}
	}
	if last < 0 {
		return nil, nil
	}
	told, err := Fold(events[:last+1])
	if err != nil || told == target {
		return nil, err
	}
	text := NoticeOff
	if target {
		text = NoticeOn
	}
	return &pipeline.ContextMessage{Plugin: NoticePlugin, Texts: []string{text}, Form: NoticeForm, Summary: text}, nil
}

// openTurn reports whether events hold a turn/start without its turn/end.
func openTurn(events []session.Event) bool {
	open := false
	for _, e := range events {
		switch e.Type {
		case session.KindTurnStart:
			open = true
		case session.KindTurnEnd:
			open = false
		}
	}
	return open
}

// CommandResult is what /plan answers (command/done's kind and text),
// the message it sends as the turn's (Message; "": none), and the
// user-switch notice the caller queues for the agent's next step when the
// switch committed at once (Notice; nil: none).
type CommandResult struct {
	Kind, Text, Message string
	Notice              *pipeline.ContextMessage
}

// Command runs a user's /plan with its raw input on log's session:
// "off" leaves plan mode; anything else enters it, and its text (trimmed)
// is the message the user sends.
func (s *Service) Command(log *session.Log, raw string) (CommandResult, error) {
	msg := strings.TrimSpace(raw)
	if msg == "off" {
		out, notice, err := s.Set(log, false)
		if err != nil {
			return CommandResult{}, err
		}
		switch out {
		case Committed:
			return CommandResult{Kind: "success", Text: "Plan mode off.", Notice: notice}, nil
		case Cancelled:
			return CommandResult{Kind: "success", Text: "Plan mode entry cancelled."}, nil
		}
		if a, err := s.Active(log); err != nil || !a && out == Noop {
			return CommandResult{Kind: "success", Text: "Plan mode is already inactive."}, err
		}
		return CommandResult{Kind: "success", Text: "Leaving plan mode (applies from the next step)."}, nil
	}
	out, notice, err := s.Set(log, true)
	if err != nil {
		return CommandResult{}, err
	}
	text := "Entering plan mode (applies from the next step). Use /plan off to leave."
	if out == Committed {
		text = "Plan mode on. Use /plan off to leave."
	}
	return CommandResult{Kind: "success", Text: text, Message: msg, Notice: notice}, nil
}

// Sections is the plan:policy section while log's session is in plan
// mode or has selected it (none without a Section).
func (s *Service) Sections(log *session.Log) ([]toolreg.Section, error) {
	if s.Section == "" {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, pend, has, err := s.state(log)
	if err != nil || !(has && pend || !has && cur) {
		return nil, err
	}
	return []toolreg.Section{{Name: SectionName, Order: SectionOrder, Text: s.Section}}, nil
}

// Config configures exit_plan_mode.
type Config struct {
	// Plan is the plan mode the tool reads and ends (required).
	Plan *Service
	// Ask asks the user to review the plan (nil: nobody can be asked; the
	// call fails).
	Ask askuser.Answerer
	// Log is the session log whose plan:policy section the registration
	// carries ([Service.Sections]; nil: none).
	Log *session.Log
}

// jsSpace is JavaScript's \s (jsjson.IsSpace), for RE2.
const jsSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// heading is upstream's /^#\s+\S/ with JavaScript's \s.
var heading = regexp.MustCompile(`^#[` + jsSpace + `]+[^` + jsSpace + `]`)

// New returns exit_plan_mode's registration; it carries the plan:policy
// section (computed per request, [Service.Sections]) of cfg.Log.
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.Plan == nil {
		return nil, errors.New("exit_plan_mode: no plan mode service")
	}
	def := pipeline.Tool{Name: ExitName, Description: exitDescription, Parameters: json.RawMessage(exitParameters), OutputSchema: json.RawMessage(exitOutput),
		Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) { return cfg.exit(ctx, call) }}
	var sections func([]pipeline.Tool) ([]toolreg.Section, error)
	if cfg.Log != nil {
		sections = func([]pipeline.Tool) ([]toolreg.Section, error) { return cfg.Plan.Sections(cfg.Log) }
	}
	return []toolreg.Tool{{Def: def, SectionsFor: sections}}, nil
}

// exit is exit_plan_mode's body, upstream's checks in its order.
func (cfg Config) exit(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		Plan string `json:"plan"`
	}
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, err
	}
	agent := call.Agent()
	if agent == nil || agent.Session == nil {
		return pipeline.Output{}, errors.New(ExitName + " requires a calling agent (no session to switch)")
	}
	if active, err := cfg.Plan.Active(agent.Session); err != nil {
		return pipeline.Output{}, err
	} else if !active {
		return pipeline.Output{}, errors.New(ExitName + " is only available in plan mode")
	}
	if !heading.MatchString(jsjson.Trim(a.Plan)) {
		return pipeline.Output{}, errors.New(ExitName + " requires a non-empty markdown plan starting with a # heading")
	}
	if cfg.Ask == nil {
		return pipeline.Output{}, errors.New("no user-questions channel is available to review the plan; ask the user to switch the session mode instead")
	}
	answers, err := cfg.Ask(ctx, []askuser.Question{{ID: ReviewID, Header: "Plan review", Question: "Approve this plan and leave plan mode?", Detail: a.Plan,
		Options: []askuser.Option{{Label: ApproveLabel, Description: "Leave plan mode; the plan is carried out from the next step."}, {Label: KeepPlanningLabel, Description: "Stay in plan mode; feedback goes back to the model."}},
		Intent:  &askuser.Intent{Kind: "plan-review", Approve: ApproveLabel}}})
	if err != nil {
		return pipeline.Output{}, err
	}
	if err := reviewed(answers); err != nil {
		return pipeline.Output{}, err
	}
	cfg.Plan.mu.Lock()
	cfg.Plan.setPending(agent.Session, intent{active: false})
	cfg.Plan.mu.Unlock()
	return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(Approved)}, Value: json.RawMessage(`{"approved":true}`)}, nil
}

// reviewed is nil when the answers approve the plan: exactly one answer
// to the review, Approve alone selected and nothing typed; else the
// error that keeps planning, with the user's feedback.
func reviewed(answers []askuser.Answer) error {
	var item *askuser.Answer
	n := 0
	for i := range answers {
		if answers[i].ID == ReviewID {
			item, n = &answers[i], n+1
		}
	}
	if n == 1 && len(item.Selected) == 1 && item.Selected[0] == ApproveLabel && item.Custom == "" {
		return nil
	}
	if n == 1 && item.Custom != "" {
		return reviewError("The user chose to keep planning; their feedback: " + item.Custom)
	}
	return reviewError("The user chose to keep planning; revise the plan and present it again.")
}

// reviewError is the review's refusal, upstream's sentence as it is.
type reviewError string

func (e reviewError) Error() string { return string(e) }

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
