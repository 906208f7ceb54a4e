package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/code/sdk"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// DefaultMaxParallelSubCalls caps how many safe nested calls overlap.
const DefaultMaxParallelSubCalls = 10

// Bounds of one program that upstream does not have (its runs may dispatch
// without end: `while (true) await tools.job_list({})` wrote 88 MB of
// session log in 30 s): far above what a program that does work needs.
const (
	// DefaultMaxNestedCalls bounds the nested calls of one program.
	DefaultMaxNestedCalls = 10000
	// DefaultMaxLogBytes bounds the session-log bytes the nested calls of
	// one program write (their tool/code-dispatch-start and
	// tool/code-dispatch events, whole lines).
	DefaultMaxLogBytes = 64 << 20
)

// Failure kinds of our bounds (upstream's runtime has no such kinds).
const (
	KindCallLimit = "call-limit"
	KindLogLimit  = "log-limit"
)

// Runner runs one program; *noderuntime.Runtime is the real one.
type Runner interface {
	Run(ctx context.Context, req noderuntime.Request) (noderuntime.Result, error)
}

// Config is run_code's deployment configuration.
type Config struct {
	// Mode is the deployment's presentation mode ("code" or "both"), named
	// in the missing-runtime error.
	Mode string
	// MaxParallelSubCalls caps overlapping safe nested calls (default 10).
	MaxParallelSubCalls int
	// MaxNestedCalls bounds the nested calls of one program (0:
	// DefaultMaxNestedCalls): the next one is not dispatched and the run
	// fails (call-limit).
	MaxNestedCalls int
	// MaxLogBytes bounds the session-log bytes of one program's nested-call
	// events (0: DefaultMaxLogBytes): once past it no further call is
	// dispatched and the run fails (log-limit).
	MaxLogBytes int64
	// Deps are run_code's collaborators.
	Deps Deps
}

// Deps are run_code's collaborators.
type Deps struct {
	// Registry runs every nested call through the whole pipeline.
	Registry *pipeline.Registry
	// Runtime runs programs; nil fails every run with the missing-runtime error.
	Runtime Runner
	// Policy resolves the call's standing sandbox policy (the program runs
	// under it, as a bash command would).
	Policy func(call *pipeline.Call) (sandbox.Policy, error)
	// Confiner confines the Node child in a confined mode (the bash provider).
	Confiner spawn.Confiner
	// Bindings lists the tools a program may call; nil means the calling
	// agent's visible set (Registry.ToolsFor: its scope's restrictions
	// applied). run_code is never one.
	Bindings func(call *pipeline.Call) []pipeline.Tool
	// DispatchLog may replace a nested call's logged content.
	DispatchLog DispatchLog
	// Warn receives contained failures (nil: the standard logger).
	Warn func(string)
}

// Tool is run_code bound to its configuration.
type Tool struct {
	cfg  Config
	deps Deps
}

// New validates the configuration and returns run_code's registration: a
// tool of the safety stack whose sections are its mode's (see [Sections]).
func New(cfg Config) ([]toolreg.Tool, error) {
	t, err := build(cfg, cfg.Deps)
	if err != nil {
		return nil, err
	}
	return []toolreg.Tool{{Def: t.definition(), SafetyStack: true, SectionsFor: t.sections}}, nil
}

// sections are the mode's sections for an agent that sees visible: see
// [Sections].
func (t *Tool) sections(visible []pipeline.Tool) ([]toolreg.Section, error) {
	return Sections(t.cfg.Mode, t.HasRuntime(), visible)
}

// Sections are the system-prompt sections of tools mode (code or both)
// for an agent that sees visible: tools:code-only (order 99, code mode)
// and tools:sdk (order 150), whose SDK declares the visible tools but
// run_code. Without a runtime they fail with upstream's missing-runtime
// error, as its prompt assembly does.
func Sections(mode string, runtime bool, visible []pipeline.Tool) ([]toolreg.Section, error) {
	if !runtime {
		return nil, MissingRuntimeError(mode)
	}
	var secs []toolreg.Section
	if mode == "code" {
		secs = append(secs, toolreg.Section{Name: "tools:code-only", Order: sdk.CodeOnlyOrder, Text: sdk.CodeOnly})
	}
	return append(secs, toolreg.Section{Name: "tools:sdk", Order: sdk.SectionOrder, Text: SDK(visible)}), nil
}

// build validates the configuration and returns the tool.
func build(cfg Config, deps Deps) (*Tool, error) {
	if cfg.MaxParallelSubCalls == 0 {
		cfg.MaxParallelSubCalls = DefaultMaxParallelSubCalls
	}
	if cfg.MaxParallelSubCalls < 0 {
		return nil, errors.New("maxParallelSubCalls must be a positive integer")
	}
	if cfg.MaxNestedCalls == 0 {
		cfg.MaxNestedCalls = DefaultMaxNestedCalls
	}
	if cfg.MaxLogBytes == 0 {
		cfg.MaxLogBytes = DefaultMaxLogBytes
	}
	if cfg.MaxNestedCalls < 0 || cfg.MaxLogBytes < 0 {
		return nil, errors.New("run_code: the bounds of nested calls and of their log bytes must be positive")
	}
	if deps.Registry == nil {
		return nil, errors.New("run_code: a registry is required to dispatch nested calls")
	}
	if deps.Runtime != nil && deps.Policy == nil {
		return nil, errors.New("run_code: a policy resolver is required to confine programs")
	}
	if deps.Warn == nil {
		deps.Warn = func(s string) { log.Print(s) }
	}
	return &Tool{cfg: cfg, deps: deps}, nil
}

// definition returns run_code as the registry registers it (TypeScript
// flavor; the only runtime here runs TypeScript).
func (t *Tool) definition() pipeline.Tool {
	desc, _ := Description(LanguageTypeScript)
	params, _ := Parameters(LanguageTypeScript)
	return pipeline.Tool{Name: Name, Description: desc, Parameters: params, Run: t.Run}
}

// Bindings returns the tools a program of call may call: the calling
// agent's visible set minus run_code (no recursion); a nil call sees every
// registered tool.
func (t *Tool) Bindings(call *pipeline.Call) []pipeline.Tool {
	var all []pipeline.Tool
	switch {
	case t.deps.Bindings != nil:
		all = t.deps.Bindings(call)
	case call != nil:
		all = t.deps.Registry.ToolsFor(call.Agent())
	default:
		all = t.deps.Registry.Tools()
	}
	out := make([]pipeline.Tool, 0, len(all))
	for _, tl := range all {
		if tl.Name != Name {
			out = append(out, tl)
		}
	}
	return out
}

// SDK renders the tools:sdk section for the tools a program may call.
func SDK(tools []pipeline.Tool) string {
	decl := make([]sdk.Tool, 0, len(tools))
	for _, tl := range tools {
		if tl.Name == Name {
			continue
		}
		decl = append(decl, sdk.Tool{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters, Output: tl.OutputSchema})
	}
	return sdk.Section(decl)
}

// MissingRuntimeError is the VERBATIM error of a non-native mode without a runtime.
func MissingRuntimeError(mode string) error {
	return fmt.Errorf("dsh-tools: mode %q requires a code runtime — load a ctx.codeRuntime implementation (e.g. @deepseek-ai/dsh-code-runtime-worker-thread) or set tools mode to \"native\"", mode)
}

// RunFailedError is a program run that failed: CodeRunFailedError /
// CODE_RUN_FAILED, "code run failed (<kind>): <message>" plus the captured
// output. It keeps the context messages its nested calls deferred.
type RunFailedError struct {
	// Kind and Message are the runtime's failure.
	Kind, Message string
	// Logs are the output captured before the failure.
	Logs []string
	// Messages are the nested calls' deferred context messages.
	Messages []pipeline.ContextMessage
}

// Error is "code run failed (<kind>): <message>", plus the captured output.
func (e *RunFailedError) Error() string {
	msg := "code run failed (" + e.Kind + "): " + e.Message
	if len(e.Logs) > 0 {
		msg += "\nCaptured output:\n" + strings.Join(e.Logs, "\n")
	}
	return msg
}

// Name is the error class name.
func (e *RunFailedError) Name() string { return "CodeRunFailedError" }

// Code is the error code.
func (e *RunFailedError) Code() string { return "CODE_RUN_FAILED" }

// ContextMessages keeps the nested calls' context messages on the failure.
func (e *RunFailedError) ContextMessages() []pipeline.ContextMessage { return e.Messages }

// errInvalidDescription is the VERBATIM description check.
var errInvalidDescription = errors.New("invalid description: expected a non-empty string")

// parseArgs reads the arguments the pipeline's schema check passed
// ([pipeline.CheckArgs]: code and description are strings) and makes the
// tool's own check: a blank description.
func (t *Tool) parseArgs(call *pipeline.Call) (code string, err error) {
	var a struct{ Code, Description *string }
	if err := call.DecodeArgs(&a); err != nil || a.Code == nil || a.Description == nil {
		// only a body run without the pipeline's check gets here
		if err := pipeline.CheckArgs(t.definition(), call); err != nil {
			return "", err
		}
		return "", errors.New("run_code: arguments are not an object of strings")
	}
	if strings.TrimSpace(*a.Description) == "" {
		return "", errInvalidDescription
	}
	return *a.Code, nil
}

// Run executes one run_code call (docs/stack.md, Code mode).
func (t *Tool) Run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	code, err := t.parseArgs(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	if t.deps.Runtime == nil {
		return pipeline.Output{}, MissingRuntimeError(t.cfg.Mode)
	}
	policy, err := t.deps.Policy(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	runCtx, settle := context.WithCancelCause(ctx)
	defer settle(errSettled)
	b := newBridge(call, t.deps.Registry, runCtx, t.cfg.MaxParallelSubCalls, t.deps.DispatchLog, t.deps.Warn)
	b.bound(t.cfg.MaxNestedCalls, t.cfg.MaxLogBytes, settle)
	if r, ok := t.deps.Runtime.(interface{ ReportsTurns() bool }); ok && r.ReportsTurns() {
		b.paced = true
	}
	var names []string
	for _, tl := range t.Bindings(call) {
		names = append(names, tl.Name)
	}
	res, runErr := t.deps.Runtime.Run(runCtx, noderuntime.Request{
		Code: code, Names: names, Call: b.call, Submitted: b.submit, TurnEnded: b.turnEnded, Policy: policy, Confiner: t.deps.Confiner, Dir: policy.WorkspaceRoot,
	})
	reason := ReasonSettled
	if ctx.Err() != nil {
		reason = noderuntime.AbortReason(ctx)
	}
	if ctx.Err() == nil {
		b.quiesce(quiesceLimit)
	}
	// Over before the signal: a call the signal's aborts free the lane for
	// is abandoned, not started.
	b.end(reason)
	settle(errSettled)
	if testBeforeDrain != nil {
		testBeforeDrain()
	}
	messages := b.drain(reason)
	if runErr != nil {
		return pipeline.Output{}, runErr
	}
	if lim := b.passed(); lim != nil {
		return pipeline.Output{}, &RunFailedError{Kind: lim.kind, Message: lim.message, Logs: res.Logs, Messages: messages}
	}
	if res.Error != nil {
		return pipeline.Output{}, &RunFailedError{Kind: res.Error.Kind, Message: res.Error.Message, Logs: res.Logs, Messages: messages}
	}
	var result *jsjson.Value
	if res.Value != nil {
		if result, err = jsjson.Parse(res.Value); err != nil {
			return pipeline.Output{}, fmt.Errorf("run_code: the runtime returned an unreadable value: %w", err)
		}
	}
	facts := res.Sandbox.Facts()
	if facts == nil && t.deps.Confiner != nil && policy.Mode == sandbox.DangerFullAccess {
		// As bash reports it: a confining executor names the mode of every
		// run, the unconfined one included. The facts ride beside the value,
		// which keeps upstream's {logs, result?}.
		facts = &sandbox.Facts{Mode: sandbox.DangerFullAccess}
	}
	return pipeline.Output{
		Value:           value(res.Logs, res.Value),
		Sandbox:         facts.JSON(),
		Content:         []pipeline.Block{pipeline.TextBlock(Text(res.Logs, result))},
		ContextMessages: messages,
	}, nil
}

// testBeforeDrain, set by tests only, runs between the run's signal and the
// drain of its calls: it stands for the drain being scheduled late.
var testBeforeDrain func()

// value is the canonical {logs, result?}.
func value(logs []string, result json.RawMessage) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"logs":[`)
	for i, l := range logs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsjson.Quote(l))
	}
	b.WriteByte(']')
	if result != nil {
		b.WriteString(`,"result":`)
		b.Write(result)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// HasRuntime reports whether a runtime is mounted.
func (t *Tool) HasRuntime() bool { return t.deps.Runtime != nil }

// DirectCallError is the VERBATIM collapse of a model-direct call of a
// native tool in code mode (ToolNotFoundError/UNKNOWN_TOOL, upstream's text).
func DirectCallError(name string) error {
	return pipeline.NewError("ToolNotFoundError", pipeline.CodeUnknownTool,
		fmt.Sprintf("unknown tool %q: only `run_code` is callable directly — call `%s` from inside a `run_code` program instead", name, name))
}
