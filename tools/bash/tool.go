package bash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/outfile"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the tool name.
const Name = "bash"

// Kind is the job kind of bash jobs (ids bash-1, bash-2, ...).
const Kind = "bash"

// Config is the deployment configuration of the bash tool.
type Config struct {
	// TimeoutMs is the default foreground timeout (default 60000).
	TimeoutMs int64
	// MaxTimeoutMs caps a requested timeout (default 600000).
	MaxTimeoutMs int64
	// PromoteOnTimeout moves a timed-out foreground command to a background
	// job instead of killing it (default true; needs background enabled and a
	// job registry).
	PromoteOnTimeout *bool
	// EnableRunInBackground allows run_in_background (default true).
	EnableRunInBackground *bool
	// MaxOutputBytes is the per-stream in-memory tail (default 64000).
	MaxOutputBytes int
	// Grace is the SIGTERM to SIGKILL delay (default 3s).
	Grace time.Duration
	// OutputDir receives the full-output files of streams that outgrow
	// MaxOutputBytes; "" means a private mkdtemp(<tmpdir>/dsh-subprocess-)
	// created on first use.
	OutputDir string
	// DefaultWorkdir is the workdir of an agentless call without a policy root
	// (default the process working directory).
	DefaultWorkdir string
	// Env is the base environment (nil: the process environment). NO_COLOR=1,
	// TERM=dumb, PAGER=cat and GIT_PAGER=cat are always set on top.
	Env []string
	// Shell is the shell program (default "bash").
	Shell string
	// Deps are the injected collaborators.
	Deps Deps
}

// Deps are the injected collaborators.
type Deps struct {
	// Policy resolves the standing sandbox policy of a call (session-aware).
	// Required when the executor confines.
	Policy func(call *pipeline.Call) (sandbox.Policy, error)
	// Escalate approves one escalation (nil: no approval service composed).
	Escalate escalation.Func
	// Confiner confines each command (the stack's *chain.Confiner; any
	// spawn.Confiner); nil
	// means the executor does not confine (no escalation fields, and a
	// confined standing mode fails closed).
	Confiner spawn.Confiner
	// Jobs is the background job registry (nil: no background, no promotion).
	Jobs *jobs.Registry
	// Warn receives warnings (nil: the standard logger).
	Warn func(string)
}

// VERBATIM errors.
var (
	// ErrAborted is the bash tool's caller-abort error, with the code the
	// recordings show (cancel-tool-calls logs ABORTED, not TOOL_ABORTED).
	ErrAborted = pipeline.ErrAborted
	// ErrBackgroundDisabled refuses run_in_background when it is disabled.
	ErrBackgroundDisabled = errors.New("run_in_background is disabled for this deployment (enableRunInBackground: false)")
	// ErrNoJobs refuses run_in_background without a job registry.
	ErrNoJobs = errors.New("background jobs unavailable: load @deepseek-ai/dsh-jobs and @deepseek-ai/dsh-tool-jobs")
	// ErrNoEscalationHere is the composition guard of a non-confining executor.
	ErrNoEscalationHere = errors.New("sandbox_permissions is not available in this composition (no sandboxing executor to escalate)")
	// ErrMissingPolicy fails construction of a confining tool without a policy resolver.
	ErrMissingPolicy = errors.New("tool-bash: the mounted bash executor confines but ctx.sandboxPolicy is missing")
)

// Tool is the bash tool bound to its configuration and collaborators.
type Tool struct {
	cfg        Config
	deps       Deps
	promote    bool
	background bool
	private    *jobs.Registry // unregistered foreground runs (no notices)

	dirOnce sync.Once
	dir     string
}

// outputDir returns the full-output directory, creating the private one on
// first use ("" when it cannot be created: spawn then uses the temp dir).
func (t *Tool) outputDir() string {
	t.dirOnce.Do(func() {
		if t.cfg.OutputDir != "" {
			t.dir = t.cfg.OutputDir
			return
		}
		if d, err := outfile.PrivateDir(); err == nil {
			t.dir = d
		}
	})
	return t.dir
}

func boolOr(p *bool, d bool) bool {
	if p == nil {
		return d
	}
	return *p
}

// New validates the composition and returns bash's registration: a tool of
// the safety stack with the tool:bash prompt section (order 105), whose call
// yields to the host unless it starts a background job (the spawn returns at
// once); Close is [Tool.Close].
func New(cfg Config) ([]toolreg.Tool, error) {
	t, err := build(cfg, cfg.Deps)
	if err != nil {
		return nil, err
	}
	return []toolreg.Tool{{Def: t.definition(), Section: &toolreg.Section{Name: "tool:bash", Order: 105, Text: PromptSection},
		Yields: foreground, SafetyStack: true, Close: t.Close}}, nil
}

// foreground is bash's yield rule: a call yields unless its arguments
// start a background job.
func foreground(args json.RawMessage) bool {
	var a struct {
		Background bool `json:"run_in_background"`
	}
	return json.Unmarshal(args, &a) != nil || !a.Background
}

// build validates the composition and returns the tool.
func build(cfg Config, deps Deps) (*Tool, error) {
	if cfg.TimeoutMs == 0 {
		cfg.TimeoutMs = 60000
	}
	if cfg.MaxTimeoutMs == 0 {
		cfg.MaxTimeoutMs = 600000
	}
	if cfg.TimeoutMs < 0 || cfg.MaxTimeoutMs < 0 {
		return nil, fmt.Errorf("tool-bash: timeoutMs and maxTimeoutMs must be positive (got %d, %d)", cfg.TimeoutMs, cfg.MaxTimeoutMs)
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = 64000
	}
	if cfg.Grace == 0 {
		cfg.Grace = 3 * time.Second
	}
	if cfg.Shell == "" {
		cfg.Shell = "bash"
	}
	if deps.Warn == nil {
		deps.Warn = func(s string) { log.Print(s) }
	}
	t := &Tool{cfg: cfg, deps: deps}
	if deps.Confiner != nil && deps.Policy == nil {
		return nil, ErrMissingPolicy
	}
	t.background = boolOr(cfg.EnableRunInBackground, true)
	t.promote = boolOr(cfg.PromoteOnTimeout, true) && t.background && deps.Jobs != nil
	t.private = jobs.NewRegistry(jobs.Options{MaxOutputBytes: cfg.MaxOutputBytes})
	return t, nil
}

// escalationAdvertised reports whether the escalation fields are in the
// schema (the executor confines).
func (t *Tool) escalationAdvertised() bool { return t.deps.Confiner != nil }

// definition returns the tool as the pipeline registers it.
func (t *Tool) definition() pipeline.Tool {
	return pipeline.Tool{
		Name:        Name,
		Description: Description(t.background, t.escalationAdvertised()),
		Parameters:  Parameters(t.promote, t.background, t.escalationAdvertised()),
		// OutputSchema declares the value run_code programs receive.
		OutputSchema: OutputSchema,
		Run:          t.Run,
	}
}

// Close stops the runs the tool started without a registry and removes the
// private full-output directory (a configured OutputDir is left alone). Jobs
// in the injected registry are the registry owner's to close.
func (t *Tool) Close() error {
	err := t.private.Close(2 * t.cfg.Grace)
	t.dirOnce.Do(func() {}) // no directory is created after Close
	if t.cfg.OutputDir == "" && t.dir != "" {
		if rerr := os.RemoveAll(t.dir); err == nil {
			err = rerr
		}
	}
	return err
}

// args are the decoded bash arguments.
type args struct {
	Command    string
	Desc       string
	TimeoutMs  *float64
	Workdir    string
	Background bool
	Esc        escalation.Args
}

// parseArgs reads the arguments the pipeline's schema check passed
// ([pipeline.CheckArgs]: command and description present, timeoutMs and
// workdir of their types, and, where they are declared, run_in_background a
// boolean and sandbox_permissions one of its enum) and makes the tool's own
// checks, upstream's validateBashArgs: a blank command or description, a
// timeout that is not positive.
func (t *Tool) parseArgs(call *pipeline.Call) (args, error) {
	var raw map[string]json.RawMessage
	a, ok := t.decodeDeclared(call, &raw)
	if !ok {
		// only a body run without the pipeline's check gets here
		if err := pipeline.CheckArgs(t.definition(), call); err != nil {
			return args{}, err
		}
		return args{}, errors.New("invalid arguments: expected an object")
	}
	switch {
	case strings.TrimSpace(a.Command) == "":
		return a, errors.New("invalid command: expected a non-empty string")
	case strings.TrimSpace(a.Desc) == "":
		return a, errors.New("invalid description: expected a non-empty string")
	case a.TimeoutMs != nil && !(*a.TimeoutMs > 0):
		// the schema admits finite numbers only: JSON.stringify writes one
		// as JavaScript prints it
		return a, fmt.Errorf("invalid timeoutMs: expected a positive number, got %s", jsjson.FormatNumber(*a.TimeoutMs))
	}
	// Only a literal true runs in the background (upstream's
	// run_in_background === true): with background execution disabled the
	// argument is not declared, and may be anything.
	a.Background = string(raw["run_in_background"]) == "true"
	// Declared, the escalation fields are strings; not declared (escalation
	// not advertised), anything may come, and a value that is not a string
	// is refused here.
	esc, err := escalation.DecodeArgs(raw, func(key string, v json.RawMessage) error {
		var b bytes.Buffer
		json.Compact(&b, v)
		return fmt.Errorf("invalid %s: expected a string, got %s", key, b.String())
	})
	a.Esc = esc
	return a, err
}

// decodeDeclared reads the arguments this tool's schema declares by their
// exact keys (command, description, timeoutMs and workdir into a; the
// background and escalation fields, where declared, only for their types),
// and the argument object into raw; ok is false when a required one is
// missing or one is not of its schema's type.
func (t *Tool) decodeDeclared(call *pipeline.Call, raw *map[string]json.RawMessage) (a args, ok bool) {
	if call.DecodeArgs(raw) != nil {
		return a, false
	}
	var command, desc *string
	declared := map[string]any{"command": &command, "description": &desc, "timeoutMs": &a.TimeoutMs, "workdir": &a.Workdir}
	if t.background {
		declared["run_in_background"] = new(bool)
	}
	if t.escalationAdvertised() {
		declared["sandbox_permissions"], declared["justification"] = new(string), new(string)
	}
	for key, dst := range declared {
		if v, present := (*raw)[key]; present && (string(v) == "null" || json.Unmarshal(v, dst) != nil) {
			return a, false
		}
	}
	if command == nil || desc == nil {
		return a, false
	}
	a.Command, a.Desc = *command, *desc
	return a, true
}

// Run executes one bash call in the order described in the package manual.
func (t *Tool) Run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	a, err := t.parseArgs(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	policy, err := t.opening().Open(ctx, call, a.Esc)
	if err != nil {
		return pipeline.Output{}, err
	}
	workdir := resolveWorkdir(policy.WorkspaceRoot, a.Workdir)

	if a.Background {
		if !t.background {
			return pipeline.Output{}, ErrBackgroundDisabled
		}
		if t.deps.Jobs == nil {
			return pipeline.Output{}, ErrNoJobs
		}
		if ctx.Err() != nil {
			return pipeline.Output{}, ErrAborted
		}
		start := t.spawner(ctx, policy, a.Command, workdir, true)
		job, err := t.deps.Jobs.Start(jobs.Spec{Owner: call.SessionID(), Kind: Kind, Label: a.Command, EscalationAdvertised: t.escalationAdvertised()}, start)
		if err != nil {
			return pipeline.Output{}, err
		}
		return output(render.Started(job.ID()), backgroundValue{Kind: "background", JobID: job.ID()}), nil
	}
	return t.foreground(ctx, call, policy, a, workdir)
}

// opening is the bash tool's escalation opening: the standing policy from the
// injected resolver (danger-full-access when none is composed), the command
// rules, and ErrNoEscalationHere when the executor does not confine.
func (t *Tool) opening() escalation.Opening {
	o := escalation.Opening{Subject: escalation.SubjectCommand, Standing: t.standingPolicy, Escalate: t.deps.Escalate}
	if !t.escalationAdvertised() {
		o.Unconfined = ErrNoEscalationHere
	}
	return o
}

func (t *Tool) standingPolicy(call *pipeline.Call) (sandbox.Policy, error) {
	if t.deps.Policy != nil {
		p, err := t.deps.Policy(call)
		if err != nil {
			return sandbox.Policy{}, err
		}
		if p.WorkspaceRoot == "" {
			p.WorkspaceRoot = t.fallbackRoot(call)
		}
		return p, nil
	}
	return sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: t.fallbackRoot(call), SessionID: call.SessionID()}, nil
}

func (t *Tool) fallbackRoot(call *pipeline.Call) string {
	if call.Agent() != nil && call.Agent().Session != nil && call.Agent().Session.Header().Cwd != "" {
		return call.Agent().Session.Header().Cwd
	}
	if t.cfg.DefaultWorkdir != "" {
		return t.cfg.DefaultWorkdir
	}
	wd, _ := os.Getwd()
	return wd
}

// resolveWorkdir keeps an absolute workdir, joins a relative one to the
// standing root as plain "<root>/<workdir>", and defaults to the root.
func resolveWorkdir(root, workdir string) string {
	switch {
	case workdir == "":
		return root
	case filepath.IsAbs(workdir):
		return workdir
	}
	return strings.TrimSuffix(root, "/") + "/" + workdir
}

func (t *Tool) env() []string {
	base := t.cfg.Env
	if base == nil {
		base = os.Environ()
	}
	over := []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if k == "NO_COLOR" || k == "TERM" || k == "PAGER" || k == "GIT_PAGER" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, over...)
}

// spawner returns how to start the command under policy with sandbox/spawn:
// danger-full-access bypasses the confiner; a confined mode is confined by it
// with the call's context (cancellation and the foreground deadline; its
// errors propagate: nothing ever runs unconfined) and classified by spawn at
// settle, while the process itself outlives the call (spawn's Detach:
// promotion, background). A runner that cannot be started fails a foreground
// call with SANDBOX_UNAVAILABLE and settles a background job as "killed
// before exit" with the runner-failure marker.
func (t *Tool) spawner(ctx context.Context, policy sandbox.Policy, command, workdir string, background bool) jobs.Spawner {
	return func(stdout, stderr io.Writer) (jobs.Process, error) {
		if policy.Mode.Confined() && t.deps.Confiner == nil {
			return nil, &sandbox.UnavailableError{Mode: policy.Mode}
		}
		if policy.Mode != sandbox.DangerFullAccess && !policy.Mode.Confined() {
			return nil, fmt.Errorf("tool-bash: unknown sandbox mode %q", string(policy.Mode))
		}
		p, err := spawn.Start(ctx, spawn.Request{
			Argv: []string{t.cfg.Shell, "-c", command}, Policy: policy, Confiner: t.deps.Confiner, Detach: true,
			Dir: workdir, Env: t.env(), Grace: t.cfg.Grace, TailBytes: t.cfg.MaxOutputBytes, OutputDir: t.outputDir(),
		})
		if err != nil {
			if ue, ok := isSpawnFailure(err); ok && background {
				return jobs.Failed(errors.New(ue.Detail), &sandbox.Report{Mode: policy.Mode, RunnerFailed: true})(stdout, stderr)
			}
			return nodeStartError(err, policy, background, stdout, stderr)
		}
		return &spawned{p: p, tail: t.cfg.MaxOutputBytes}, nil
	}
}

// timeout is the call's timeout in milliseconds as the model gave it (a
// fraction of a millisecond included: upstream reports the number it was
// given), capped at maxTimeoutMs; without one, the configured default.
func (t *Tool) timeout(a args) float64 {
	if a.TimeoutMs == nil {
		return float64(min(t.cfg.TimeoutMs, t.cfg.MaxTimeoutMs))
	}
	return min(*a.TimeoutMs, float64(t.cfg.MaxTimeoutMs))
}

// timerDelay is how long a timeout of ms milliseconds waits: as Node's
// setTimeout waits, at least one millisecond.
func timerDelay(ms float64) time.Duration {
	return time.Duration(max(ms, 1) * float64(time.Millisecond))
}

func (t *Tool) foreground(ctx context.Context, call *pipeline.Call, policy sandbox.Policy, a args, workdir string) (pipeline.Output, error) {
	ms := t.timeout(a)
	d := timerDelay(ms)
	deadline := time.Now().Add(d)
	if ctx.Err() != nil { // cancelled before anything started (e.g. after a grant)
		return pipeline.Output{}, ErrAborted
	}
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	start := t.spawner(cctx, policy, a.Command, workdir, false)
	// A foreground command is an unregistered run: it takes a job id only
	// if it is promoted.
	spec := jobs.Spec{Owner: call.SessionID(), Kind: Kind, Label: a.Command, EscalationAdvertised: t.escalationAdvertised()}
	job, err := t.private.Run(spec, start)
	if err != nil {
		if ctx.Err() != nil {
			return pipeline.Output{}, ErrAborted
		}
		if cctx.Err() == context.DeadlineExceeded && errors.Is(err, context.DeadlineExceeded) {
			// the timeout expired before anything was spawned (any other
			// error, a sandbox refusal above all, is the call's error)
			f := render.Foreground{TimedOut: true, TimeoutMs: ms}
			return output(render.Result(f, t.escalationAdvertised()), foregroundValue(f, false)), nil
		}
		return pipeline.Output{}, err
	}
	settled, werr := job.WaitFor(ctx, time.Until(deadline))
	if werr != nil {
		// aborted: terminate the group (SIGTERM, SIGKILL after the grace)
		// and answer once it is gone
		job.Kill()
		<-job.Done()
		job.Forget()
		return pipeline.Output{}, ErrAborted
	}
	timedOut := false
	if !settled {
		if t.promote {
			err := t.deps.Jobs.Adopt(job)
			if err == nil {
				stdout, stderr := job.Streams()
				text := render.Promoted(stdout, stderr, ms, job.ID())
				return output(text, promotedValue{Kind: "promoted", JobID: job.ID(), TimeoutMs: ms, Output: render.Body(render.StreamText(stdout), render.StreamText(stderr))}), nil
			}
			t.deps.Warn(fmt.Sprintf("tool-bash: the job registry refused to adopt call %s (%v); it is killed at its deadline", call.CallID(), err))
		}
		timedOut = true
		job.Kill()
		<-job.Done()
	}
	job.Forget()
	s, _ := job.Settled()
	if s.Err != nil {
		return pipeline.Output{}, s.Err
	}
	stdout, stderr := job.Streams()
	report := s.Sandbox
	if report == nil && t.deps.Confiner != nil && policy.Mode == sandbox.DangerFullAccess {
		// A confining executor reports the mode of every foreground run,
		// the unconfined danger-full-access one included (upstream's
		// SandboxedBashExecutor.run: {mode, denied: false}, no enforcement).
		// A limit that stopped it is named as for a confined run.
		report = &sandbox.Report{Mode: sandbox.DangerFullAccess, Bound: s.Bound}
	}
	f := render.Foreground{
		ExitCode: s.Outcome.ExitCode, Signaled: s.Outcome.Killed && s.Outcome.Signal != "", Signal: s.Outcome.Signal,
		TimedOut: timedOut, TimeoutMs: ms, Stdout: stdout, Stderr: stderr, Sandbox: report,
	}
	if !timedOut {
		f.Stopped = job.StopReason() // stopped from outside the call (job_kill, shutdown)
	}
	out := output(render.Result(f, t.escalationAdvertised()), foregroundValue(f, false))
	out.Sandbox = report.Facts().JSON()
	return out, nil
}

func output(text string, value any) pipeline.Output {
	v, _ := json.Marshal(value)
	return pipeline.Output{Value: v, Content: []pipeline.Block{pipeline.TextBlock(text)}}
}

// The canonical values, in upstream's key order (a program may return a
// value whole, so the order shows): background, promoted (a foreground
// command still running at its timeout, newer upstream) and foreground.
type (
	backgroundValue struct {
		Kind  string `json:"kind"`
		JobID string `json:"jobId"`
	}
	promotedValue struct {
		Kind      string  `json:"kind"`
		JobID     string  `json:"jobId"`
		TimeoutMs float64 `json:"timeoutMs"`
		Output    string  `json:"output"`
	}
	streamValue struct {
		Text      string `json:"text"`
		Truncated bool   `json:"truncated"`
		SpillPath string `json:"spillPath,omitempty"`
	}
	sandboxValue struct {
		Mode         sandbox.Mode        `json:"mode"`
		Denied       bool                `json:"denied"`
		Enforcement  sandbox.Enforcement `json:"enforcement,omitempty"`
		RunnerFailed bool                `json:"runnerFailed,omitempty"`
	}
	foregroundValueT struct {
		Kind      string        `json:"kind"`
		ExitCode  *int          `json:"exitCode"`
		Signal    *string       `json:"signal"`
		TimedOut  bool          `json:"timedOut"`
		Aborted   bool          `json:"aborted"`
		TimeoutMs float64       `json:"timeoutMs"`
		Stdout    streamValue   `json:"stdout"`
		Stderr    streamValue   `json:"stderr"`
		Stopped   string        `json:"stopped,omitempty"`
		Sandbox   *sandboxValue `json:"sandbox,omitempty"`
	}
)

func foregroundValue(f render.Foreground, aborted bool) foregroundValueT {
	stream := func(s render.Stream) streamValue {
		return streamValue{Text: s.Text, Truncated: s.Truncated, SpillPath: s.FullPath}
	}
	v := foregroundValueT{Kind: "foreground", TimedOut: f.TimedOut, Aborted: aborted, TimeoutMs: f.TimeoutMs,
		Stdout: stream(f.Stdout), Stderr: stream(f.Stderr), Stopped: f.Stopped}
	if f.Signaled {
		sig := f.Signal
		v.Signal = &sig
	} else {
		code := f.ExitCode
		v.ExitCode = &code
	}
	if f.Sandbox != nil {
		v.Sandbox = &sandboxValue{Mode: f.Sandbox.Mode, Denied: f.Sandbox.Denied, Enforcement: f.Sandbox.Enforcement, RunnerFailed: f.Sandbox.RunnerFailed}
	}
	return v
}
