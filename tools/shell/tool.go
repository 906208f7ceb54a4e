package shell

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/internal/jstext"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the tool's model-facing name (it replaces the one-shot bash).
const Name = "bash"

// VERBATIM texts of upstream's tool-bash-persistent.
const (
	DefaultDescription = "Run commands in a persistent bash shell. State, including the current directory and exported environment variables, persists across calls for this agent."
	Parameters         = `{"type":"object","properties":{"command":{"type":"string","description":"The bash command to run. Relative path is preferred in the command."}},"required":["command"]}`
	TruncatedMessage   = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
	LostPrefixMessage  = "<response clipped><NOTE>The beginning of this command output was dropped by the terminal scrollback limit. The following text is the earliest retained output.</NOTE>\n"
	ResetMessage       = "The persistent bash shell was reset; the next bash call starts from the workspace with a fresh current directory and environment."
	outputSchema       = `{"type":"string"}`
)

// Defaults of upstream's configuration.
const (
	DefaultTimeoutMs      = 300000
	DefaultMaxOutputChars = 16000
)

// Config configures the tool.
type Config struct {
	// TimeoutMs bounds each call, the shell's start included (0:
	// DefaultTimeoutMs).
	TimeoutMs int64
	// MaxOutputChars clips a result, in UTF-16 code units (0:
	// DefaultMaxOutputChars).
	MaxOutputChars int
	// Description is the model-facing description ("": DefaultDescription).
	Description string
	// Policy resolves the call's standing sandbox policy (nil: no sandbox
	// policy composed: danger-full-access in the session's cwd).
	Policy func(*pipeline.Call) (sandbox.Policy, error)
	// Confiner confines the shell in a confined mode (the stack's, as
	// bash's); nil: a confined mode fails closed.
	Confiner spawn.Confiner
	// Shell is the shell program (default /bin/bash), started with
	// --noprofile --norc -i.
	Shell string
	// Env is the base environment (nil: the process's); the terminal's
	// variables are set on top.
	Env []string
	// Grace is the SIGTERM to SIGKILL delay when a shell is closed
	// (default 3s).
	Grace time.Duration
}

// New returns the persistent bash tool's registration: a tool of the
// safety stack, no prompt section; Close closes every shell.
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.TimeoutMs == 0 {
		cfg.TimeoutMs = DefaultTimeoutMs
	}
	if cfg.MaxOutputChars == 0 {
		cfg.MaxOutputChars = DefaultMaxOutputChars
	}
	if cfg.Description == "" {
		cfg.Description = DefaultDescription
	}
	if cfg.Shell == "" {
		cfg.Shell = "/bin/bash"
	}
	if cfg.Grace == 0 {
		cfg.Grace = 3 * time.Second
	}
	switch {
	case cfg.TimeoutMs < 0:
		return nil, errors.New("tool-bash-persistent: timeoutMs must be a positive safe integer")
	case cfg.MaxOutputChars < 0:
		return nil, errors.New("tool-bash-persistent: maxOutputChars must be a positive safe integer")
	case jsjson.Trim(cfg.Description) == "":
		return nil, errors.New("tool-bash-persistent: description must be non-empty")
	}
	t := &Tool{cfg: cfg, owners: map[*pipeline.Agent]*owner{}}
	return []toolreg.Tool{{Def: pipeline.Tool{Name: Name, Description: cfg.Description, Parameters: json.RawMessage(Parameters),
		OutputSchema: json.RawMessage(outputSchema), Run: t.run}, SafetyStack: true, Close: t.Close}}, nil
}

// Tool is the persistent bash tool: one shell per agent.
type Tool struct {
	cfg Config

	mu     sync.Mutex
	owners map[*pipeline.Agent]*owner
	closed bool
	ptys   int
}

// owner is an agent's shell; its mutex serializes the agent's calls.
// unfence removes the mode fence its shell holds on the agent's log (nil:
// none held).
type owner struct {
	mu      sync.Mutex
	shell   *shell
	unfence func()
}

func (t *Tool) run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		Command string `json:"command"`
	}
	if call.DecodeArgs(&a) != nil {
		return pipeline.Output{}, errors.New("invalid arguments: expected an object")
	}
	if jsjson.Trim(a.Command) == "" {
		return pipeline.Output{}, errors.New("command must be a non-empty string")
	}
	agent := call.Agent()
	if agent == nil {
		return pipeline.Output{}, errors.New("bash requires an owning agent session")
	}
	o, err := t.owner(agent)
	if err != nil {
		return pipeline.Output{}, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if ctx.Err() != nil {
		return pipeline.Output{}, pipeline.ErrAborted
	}
	text, err := t.execute(ctx, call, o, a.Command)
	if err != nil {
		return pipeline.Output{}, err
	}
	v, _ := json.Marshal(text)
	return pipeline.Output{Value: v, Content: []pipeline.Block{pipeline.TextBlock(text)}}, nil
}

func (t *Tool) owner(agent *pipeline.Agent) (*owner, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errors.New("tool-bash-persistent: closed")
	}
	o := t.owners[agent]
	if o == nil {
		o = &owner{}
		t.owners[agent] = o
	}
	return o, nil
}

// standing is the call's policy: the resolver's, or danger-full-access in
// the session's cwd when no sandbox policy is composed.
func (t *Tool) standing(call *pipeline.Call) (sandbox.Policy, error) {
	cwd := ""
	if s := call.Agent().Session; s != nil {
		cwd = s.Header().Cwd
	}
	if t.cfg.Policy == nil {
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		return sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: cwd, SessionID: call.SessionID()}, nil
	}
	p, err := t.cfg.Policy(call)
	if err != nil {
		return sandbox.Policy{}, err
	}
	if p.WorkspaceRoot == "" {
		p.WorkspaceRoot = cwd
	}
	return p, nil
}

// shellFor is the agent's shell under the policy in force. While a shell
// is open or starting, its mode fence refuses a sandbox/mode change on the
// agent's log, as upstream's does; a shell whose policy still differs from
// the call's (a policy the fence does not hold: a call's own approval, an
// appender that does not go through this log) is closed first and a new
// one started, so a command never runs under a policy other than its
// call's.
func (t *Tool) shellFor(ctx context.Context, call *pipeline.Call, o *owner) (*shell, error) {
	pol, err := t.standing(call)
	if err != nil {
		return nil, err
	}
	if o.shell != nil && !samePolicy(o.shell.policy, pol) {
		t.reset(o)
	}
	if o.shell != nil {
		return o.shell, nil
	}
	if pol, err = t.fence(call, o, pol); err != nil {
		return nil, err
	}
	dir := pol.WorkspaceRoot
	if s := call.Agent().Session; s != nil && s.Header().Cwd != "" {
		dir = s.Header().Cwd
	}
	s, err := start(ctx, spec{argv: []string{t.cfg.Shell, "--noprofile", "--norc", "-i"}, dir: dir,
		env: t.env(call), policy: pol, confiner: t.cfg.Confiner, grace: t.cfg.Grace})
	if err != nil {
		t.reset(o)
		return nil, err
	}
	o.shell = s
	return s, nil
}

// fenceTries bounds the reads of a policy that changes while a shell's
// fence is put up.
const fenceTries = 3

// fence puts up the mode fence of the shell about to start under pol, then
// resolves the call's policy again: adding the check waits for an append
// in progress, so a mode switched before the fence is in the second read
// and one switched after is refused. It returns the policy the shell
// starts under, which no sandbox/mode event through the log can change
// while the fence stands.
func (t *Tool) fence(call *pipeline.Call, o *owner, pol sandbox.Policy) (sandbox.Policy, error) {
	log := call.Agent().Session
	if log == nil {
		return pol, nil
	}
	for range fenceTries {
		o.unfence = log.AddCheck(fenceCheck(log, pol.Mode))
		again, err := t.standing(call)
		if err != nil {
			t.reset(o)
			return sandbox.Policy{}, err
		}
		if samePolicy(pol, again) {
			return pol, nil
		}
		t.reset(o)
		pol = again
	}
	return sandbox.Policy{}, errors.New("tool-bash-persistent: the sandbox mode kept changing while the persistent bash shell started")
}

// samePolicy compares what confines a shell.
func samePolicy(a, b sandbox.Policy) bool {
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	return string(aj) == string(bj)
}

// reset closes the owner's shell and takes its mode fence down.
func (t *Tool) reset(o *owner) {
	if o.shell != nil {
		o.shell.close()
		o.shell = nil
	}
	if o.unfence != nil {
		o.unfence()
		o.unfence = nil
	}
}

// env is upstream's childEnvironment for bash over the base environment.
func (t *Tool) env(call *pipeline.Call) []string {
	t.mu.Lock()
	t.ptys++
	id := fmt.Sprintf("pty-%d", t.ptys)
	t.mu.Unlock()
	over := []string{"TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "DSH_SHELL=1", "DSH_SESSION_ID=" + call.SessionID(),
		"DSH_PTY_SESSION_ID=" + id, "PS1=" + Prompt,
		`PROMPT_COMMAND=printf "\033]133;D;%s\007" "$?"; PS1='` + Prompt + `'`, "BASH_SILENCE_DEPRECATION_WARNING=1"}
	base := t.cfg.Env
	if base == nil {
		base = os.Environ()
	}
	set := map[string]bool{}
	for _, kv := range over {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			out = append(out, kv)
		}
	}
	return append(out, over...)
}

// execute runs one command in the agent's shell: upstream's
// executeCommand.
func (t *Tool) execute(ctx context.Context, call *pipeline.Call, o *owner, command string) (string, error) {
	timeout := time.Duration(t.cfg.TimeoutMs) * time.Millisecond
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := t.shellFor(dctx, call, o)
	if err != nil {
		if ctx.Err() != nil {
			return "", pipeline.ErrAborted
		}
		return "", err
	}
	if !s.inputWait && !s.waitPrompt(dctx) {
		select {
		case <-s.proc.Done():
			return t.exitResponse(o, "", ""), nil
		default:
		}
	}
	start, end := markers()
	op, err := s.send(wrap(command, start, end))
	if err != nil {
		t.reset(o)
		return "", err
	}
	return t.await(ctx, dctx, o, op, start, end)
}

// await waits for the command's end marker and answers as upstream's
// executeCommand: its output; the shell's end; upstream's timed-out text
// with the shell reset; ErrAborted when ctx ends; or, when the foreground
// waits for terminal input, the output so far with the shell and the
// waiting command kept (the next call's text is typed to it).
func (t *Tool) await(ctx, dctx context.Context, o *owner, op *sendOp, start, end string) (string, error) {
	s := o.shell
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var probe chan probed // the poll in flight (nil: none)
	for {
		text, dropped := s.snapshot()
		if out, ok := complete(text, start, end, dropped); ok {
			return t.render(out), nil
		}
		select {
		case <-s.changed:
			continue
		case <-tick.C:
			if probe == nil {
				probe = s.probe(op)
			}
			continue
		case p := <-probe:
			if probe, op = nil, p.op; p.v != inputWait {
				continue
			}
			text, dropped := s.snapshot()
			if out, ok := complete(text, start, end, dropped); ok {
				return t.render(out), nil
			}
			s.inputWait = true
			return t.render(partialOutput(text, start, end)), nil
		case <-s.proc.Done():
			text, dropped := s.snapshot()
			if out, ok := complete(text, start, end, dropped); ok {
				return t.render(out), nil
			}
			return t.exitResponse(o, start, end), nil
		case <-dctx.Done():
		}
		text, _ = s.snapshot()
		t.reset(o)
		if ctx.Err() != nil {
			return "", pipeline.ErrAborted
		}
		partial := t.render(partialOutput(text, start, end))
		secs := math.Floor(float64(t.cfg.TimeoutMs)/1000 + 0.5)
		return fmt.Sprintf("Your command timed out after %s seconds or experienced an OOM error. Below is partial output:\n%s\n%s", jsjson.FormatNumber(secs), partial, ResetMessage), nil
	}
}

// exitResponse is upstream's respondToSessionExit: what the command
// printed, the shell's end, and the reset.
func (t *Tool) exitResponse(o *owner, start, end string) string {
	s := o.shell
	code, signal := s.exited()
	text, _ := s.snapshot()
	t.reset(o)
	var content string
	if start != "" {
		content = t.render(partialOutput(text, start, end))
	}
	status := "[shell exited]"
	switch {
	case signal != "":
		status = "[shell killed by signal: " + signal + "]"
	case code >= 0:
		status = fmt.Sprintf("[shell exited: code %d]", code)
	}
	return appendStatus(content, status) + "\n" + ResetMessage
}

// output is a command's captured text: incomplete when its head is lost;
// code is its exit status (-1: unknown).
type output struct {
	text       string
	incomplete bool
	code       int
}

var statusRe = regexp.MustCompile(`^(\d+)\r?\n`)

// complete is upstream's commandOutput: the text between the last start
// marker before the last end marker and that end marker, when the end
// marker's status line is complete.
func complete(text, start, end string, dropped bool) (output, bool) {
	e := strings.LastIndex(text, end)
	if e < 0 {
		return output{}, false
	}
	m := statusRe.FindStringSubmatch(text[e+len(end):])
	if m == nil {
		return output{}, false
	}
	code := 0
	fmt.Sscan(m[1], &code)
	from, incomplete := 0, true
	if s := strings.LastIndex(text[:e], start); s >= 0 {
		from, incomplete = s+len(start), false
	}
	return output{text: trimNewline(trimLeadingNewline(text[from:e])), incomplete: incomplete, code: code}, true
}

// partialOutput is upstream's: the text after the start marker (all of it
// when the marker was lost) up to an end marker.
func partialOutput(text, start, end string) output {
	s := strings.LastIndex(text, start)
	if s >= 0 {
		return output{text: trimNewline(trimLeadingNewline(text[s+len(start):])), code: -1}
	}
	if e := strings.LastIndex(text, end); e >= 0 {
		text = text[:e]
	}
	return output{text: trimNewline(text), incomplete: true, code: -1}
}

func trimLeadingNewline(s string) string {
	s, _ = strings.CutPrefix(s, "\r")
	if strings.HasPrefix(s, "\n") {
		return s[1:]
	}
	return s
}

func trimNewline(s string) string {
	s, _ = strings.CutSuffix(s, "\n")
	s, _ = strings.CutSuffix(s, "\r")
	return s
}

// render is upstream's renderCaptured.
func (t *Tool) render(o output) string {
	text := o.text
	if jstext.Units(text) > t.cfg.MaxOutputChars {
		text = jstext.Head(text, t.cfg.MaxOutputChars) + TruncatedMessage
	} else if o.incomplete {
		text += TruncatedMessage
	}
	if o.incomplete && o.text != "" {
		text = LostPrefixMessage + text
	}
	if o.code > 0 {
		return appendStatus(text, fmt.Sprintf("[exit code: %d]", o.code))
	}
	return text
}

func appendStatus(content, marker string) string {
	if content == "" {
		return marker
	}
	return content + "\n" + marker
}

// markers are a call's start and end markers (a random nonce each).
func markers() (start, end string) {
	b := make([]byte, 16)
	rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	nonce := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	return "__DSH_PERSISTENT_BASH_START_" + nonce + "__", "__DSH_PERSISTENT_BASH_END_" + nonce + ":"
}

// Close closes every shell; later calls fail.
func (t *Tool) Close() error {
	t.mu.Lock()
	t.closed = true
	owners := t.owners
	t.owners = map[*pipeline.Agent]*owner{}
	t.mu.Unlock()
	for _, o := range owners {
		o.mu.Lock()
		t.reset(o)
		o.mu.Unlock()
	}
	return nil
}
