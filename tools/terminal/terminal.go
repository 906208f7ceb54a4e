package terminal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Tool names.
const (
	OpenName   = "terminal_open"
	SendName   = "terminal_send"
	ReadName   = "terminal_read"
	SignalName = "terminal_signal"
	CloseName  = "terminal_close"
	ListName   = "terminal_list"
)

// PromptSection is the terminal tools' system-prompt section (VERBATIM).
const PromptSection = "Use a terminal session only when work needs persistent terminal state or interactive stdin; prefer shell/read/write/edit for bounded one-shot operations. Track every terminal session id and close sessions that no longer matter. An inferred_idle or timeout result does not prove the foreground command exited."

// DefaultMaxResultBytes bounds a send's text when the config does not.
const DefaultMaxResultBytes = 16384

// Status is a session's status.
type Status struct {
	Kind     string `json:"kind"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// SendResult is what a send shows.
type SendResult struct {
	Viewport   string
	WaitReason string
	Status     Status
	Truncated  bool
}

// ReadResult is one scrollback page: lines [Start, End) of Total.
type ReadResult struct {
	Lines             []string
	Start, End, Total int
}

// Backend is one terminal session's mechanics.
type Backend interface {
	Status() Status
	Send(text string, submit bool) SendResult
	Read(offset, count int) ReadResult
	Signal(sig string) error
}

// Config configures the terminal tools.
type Config struct {
	// MaxResultBytes bounds a send's text (default 16384).
	MaxResultBytes int
}

// Registry holds the sessions of one process: ids pty-<n>, each owned by
// the agent that opened it.
type Registry struct {
	cfg      Config
	mu       sync.Mutex
	next     int
	sessions map[string]*record
	order    []string
}

type record struct {
	id, name, typ string
	owner         *pipeline.Agent
	backend       Backend
}

// New returns the registrations of the six terminal tools over a new,
// empty registry of sessions; terminal_open brings the tool:terminal
// prompt section (order 105).
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	r := &Registry{cfg: cfg, sessions: map[string]*record{}}
	out := make([]toolreg.Tool, 0, 6)
	for _, d := range r.tools() {
		out = append(out, toolreg.Tool{Def: d})
	}
	out[0].Section = &toolreg.Section{Name: "tool:terminal", Order: 105, Text: PromptSection}
	return out, nil
}

// tools are the six terminal tools, terminal_open first.
func (r *Registry) tools() []pipeline.Tool {
	return []pipeline.Tool{
		{Name: OpenName, Description: "Create a persistent, owner-isolated terminal session from a registered backend type. Use this for shell or REPL state that must survive across tool calls.", Parameters: json.RawMessage(openSchema), Run: r.open},
		{Name: SendName, Description: "Send text to a persistent terminal. By default Enter is submitted and the call waits for a prompt, stdin wait, output silence, timeout, or session exit. Background mode returns a job id for job_output/job_kill.", Parameters: json.RawMessage(sendSchema), Run: r.send},
		{Name: ReadName, Description: "Read a bounded page of retained output from a persistent terminal without sending input.", Parameters: json.RawMessage(readSchema), Run: r.read, ConcurrencySafe: true},
		{Name: SignalName, Description: "Send an allowed signal to the current foreground process group of a persistent terminal.", Parameters: json.RawMessage(signalSchema), Run: r.signal},
		{Name: CloseName, Description: "Close one persistent terminal and wait until its captured owned process tree is gone.", Parameters: json.RawMessage(closeSchema), Run: r.close},
		{Name: ListName, Description: "List persistent terminal sessions owned by the current agent.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Run: r.list, ConcurrencySafe: true},
	}
}

const (
	sessionIDProp = `"sessionId":{"type":"string","description":"Terminal session id."}`
	openSchema    = `{"type":"object","properties":{"type":{"type":"string","description":"Registered terminal backend type, usually \"shell\"."},"name":{"type":"string","description":"Optional owner-local display name such as \"main\" or \"gdb\"."},"cwd":{"type":"string","description":"Initial working directory. Defaults to the deployment workspace root."}},"required":["type"]}`
	sendSchema    = `{"type":"object","properties":{"sessionId":{"type":"string","description":"Terminal session id returned by terminal_open or terminal_list."},"text":{"type":"string","description":"UTF-8 text to write to the terminal."},"submit":{"type":"boolean","description":"Submit Enter after text (default true). Set false for control characters or incomplete REPL input."},"run_in_background":{"type":"boolean","description":"Return a job id immediately; collect with job_output or stop with job_kill."}},"required":["sessionId","text"]}`
	readSchema    = `{"type":"object","properties":{` + sessionIDProp + `,"offset":{"type":"number","description":"Newest-relative line offset (default 0)."},"count":{"type":"number","description":"Requested line count (default 500; backend caps apply)."}},"required":["sessionId"]}`
	signalSchema  = `{"type":"object","properties":{` + sessionIDProp + `,"signal":{"type":"string","description":"Signal to deliver. Shell-targeted SIGKILL is rejected; use terminal_close.","enum":["SIGINT","SIGTERM","SIGKILL","SIGTSTP","SIGHUP"]}},"required":["sessionId","signal"]}`
	closeSchema   = `{"type":"object","properties":{` + sessionIDProp + `},"required":["sessionId"]}`
)

func decode(call *pipeline.Call, v any) error {
	if err := call.DecodeArgs(v); err != nil {
		return errors.New(`"arguments" must be an object`)
	}
	return nil
}

func text(s string) pipeline.Output {
	return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(s)}}
}

func (r *Registry) open(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		Type string  `json:"type"`
		Name *string `json:"name"`
	}
	if err := decode(call, &a); err != nil {
		return pipeline.Output{}, err
	}
	if a.Type != "shell" {
		return pipeline.Output{}, fmt.Errorf("no PTY backend registered for %q", a.Type)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.Name != nil {
		if *a.Name == "" {
			return pipeline.Output{}, errors.New("PTY session name must be non-empty")
		}
		for _, rec := range r.sessions {
			if rec.owner == call.Agent() && rec.name == *a.Name {
				return pipeline.Output{}, fmt.Errorf("PTY session name %q already exists for this owner", *a.Name)
			}
		}
	}
	r.next++
	b, motd := NewFakeShell()
	rec := &record{id: fmt.Sprintf("pty-%d", r.next), typ: a.Type, owner: call.Agent(), backend: b}
	if a.Name != nil {
		rec.name = *a.Name
	}
	r.sessions[rec.id] = rec
	r.order = append(r.order, rec.id)
	return text("started terminal session " + rec.label() + "\n" + motd), nil
}

// label is "<id> (<name>) [type: <type>]", the name left out when none.
func (rec *record) label() string {
	s := rec.id
	if rec.name != "" {
		s += " (" + rec.name + ")"
	}
	return s + " [type: " + rec.typ + "]"
}

// onSession runs fn, holding the registry's lock, on the caller's session
// id; an unknown id or another agent's session is refused with upstream's
// texts, as plain errors.
func (r *Registry) onSession(call *pipeline.Call, id string, fn func(*record) (pipeline.Output, error)) (pipeline.Output, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.sessions[id]
	if rec == nil {
		return pipeline.Output{}, fmt.Errorf("unknown PTY session %s", id)
	}
	if rec.owner != call.Agent() {
		return pipeline.Output{}, fmt.Errorf("PTY session %s belongs to another agent", id)
	}
	return fn(rec)
}

// SendMeta is a send's meta: the whole viewport, the wait reason, the
// status and the backend's truncation flag.
type SendMeta struct {
	Viewport      string `json:"viewport"`
	WaitReason    string `json:"waitReason"`
	SessionStatus Status `json:"sessionStatus"`
	Truncated     bool   `json:"truncated"`
}

func (r *Registry) send(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		SessionID  string `json:"sessionId"`
		Text       string `json:"text"`
		Submit     *bool  `json:"submit"`
		Background bool   `json:"run_in_background"`
	}
	if err := decode(call, &a); err != nil {
		return pipeline.Output{}, err
	}
	return r.onSession(call, a.SessionID, func(rec *record) (pipeline.Output, error) {
		if a.Background {
			return pipeline.Output{}, errors.New("background terminal sends are not available in this composition")
		}
		res := rec.backend.Send(a.Text, a.Submit == nil || *a.Submit)
		meta := marshal(SendMeta{res.Viewport, res.WaitReason, res.Status, res.Truncated})
		return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(RenderSend(res, r.cfg.MaxResultBytes))}, Meta: meta}, nil
	})
}

// RenderSend is a send's text: the viewport, "\n[wait: <reason>]" and
// "\n[session: <status>]"; over max bytes the suffix gains
// "\n[output truncated]" and only the viewport's tail that fits is kept.
func RenderSend(res SendResult, limit int) string {
	suffix := "\n[wait: " + res.WaitReason + "]\n[session: " + res.Status.Kind + "]"
	if len(res.Viewport)+len(suffix) <= limit {
		return res.Viewport + suffix
	}
	suffix += "\n[output truncated]"
	keep := max(0, limit-len(suffix))
	cut := max(0, len(res.Viewport)-keep)
	for cut < len(res.Viewport) && !utf8.RuneStart(res.Viewport[cut]) {
		cut++
	}
	return res.Viewport[cut:] + suffix
}

func (r *Registry) read(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		SessionID string   `json:"sessionId"`
		Offset    *float64 `json:"offset"`
		Count     *float64 `json:"count"`
	}
	if err := decode(call, &a); err != nil {
		return pipeline.Output{}, err
	}
	offset, count := 0, 500
	if a.Offset != nil {
		if *a.Offset < 0 || *a.Offset != float64(int(*a.Offset)) {
			return pipeline.Output{}, errors.New("offset must be a non-negative integer")
		}
		offset = int(*a.Offset)
	}
	if a.Count != nil {
		if *a.Count < 1 || *a.Count != float64(int(*a.Count)) {
			return pipeline.Output{}, errors.New("count must be a positive integer")
		}
		count = min(int(*a.Count), 500)
	}
	return r.onSession(call, a.SessionID, func(rec *record) (pipeline.Output, error) {
		page := rec.backend.Read(offset, count)
		return text(strings.Join(page.Lines, "\n") + fmt.Sprintf("\n[lines: %d-%d of %d]", page.Start, page.End, page.Total)), nil
	})
}

func (r *Registry) signal(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		SessionID string `json:"sessionId"`
		Signal    string `json:"signal"`
	}
	if err := decode(call, &a); err != nil {
		return pipeline.Output{}, err
	}
	return r.onSession(call, a.SessionID, func(rec *record) (pipeline.Output, error) {
		if err := rec.backend.Signal(a.Signal); err != nil {
			return pipeline.Output{}, err
		}
		return text(fmt.Sprintf("sent %s to terminal session %s", a.Signal, rec.id)), nil
	})
}

func (r *Registry) close(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := decode(call, &a); err != nil {
		return pipeline.Output{}, err
	}
	return r.onSession(call, a.SessionID, func(rec *record) (pipeline.Output, error) {
		delete(r.sessions, rec.id)
		return text("closed terminal session " + rec.id), nil
	})
}

func (r *Registry) list(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	for _, id := range r.order {
		if rec := r.sessions[id]; rec != nil && rec.owner == call.Agent() {
			lines = append(lines, rec.label()+" [session: "+rec.backend.Status().Kind+"]")
		}
	}
	if len(lines) == 0 {
		return text("(no terminal sessions)"), nil
	}
	return text(strings.Join(lines, "\n")), nil
}

// marshal encodes v as JSON without HTML escaping.
func marshal(v any) json.RawMessage {
	b, err := jsjson.Marshal(v)
	if err != nil {
		panic("tools/terminal: not encodable: " + err.Error())
	}
	return b
}
