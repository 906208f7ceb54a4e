package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/subagent"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Upstream's engine defaults.
const (
	DefaultMaxTotalAgents  = 1000
	DefaultMaxItemsPerCall = 4096
	DefaultSyncTimeoutMs   = 5000
	DefaultMaxResultChars  = 50000
)

// Config configures the tool.
type Config struct {
	// Provider starts each agent() child ("" : "spawn").
	Provider string
	// MaxConcurrentAgents (0: min(16, max(1, cores-2))), MaxTotalAgents,
	// MaxItemsPerCall and SyncTimeoutMs (0: upstream's) are the engine's caps.
	MaxConcurrentAgents, MaxTotalAgents, MaxItemsPerCall, SyncTimeoutMs int
	// MaxResultChars clips the rendered return value (0: 50000).
	MaxResultChars int
	// Deps are what the tool runs on.
	Deps Deps
}

// Deps are what the tool runs on: the Node runtime run_code uses (the body
// runs in a fresh confined child), the call's sandbox policy and the
// confiner, and the delegation runtime that starts each child.
type Deps struct {
	Runtime  *noderuntime.Runtime
	Policy   func(call *pipeline.Call) (sandbox.Policy, error)
	Confiner spawn.Confiner
	Service  subagent.Service
}

// New returns the workflow tool's registration, with its tool:workflow
// prompt section (order 115).
func New(cfg Config) ([]toolreg.Tool, error) {
	w := &tool{cfg: cfg, deps: cfg.Deps}
	return []toolreg.Tool{{Def: pipeline.Tool{Name: Name, Description: Description, Parameters: json.RawMessage(parameters), Run: w.run},
		Section: &toolreg.Section{Name: "tool:" + Name, Order: SectionOrder, Text: Section}}}, nil
}

type tool struct {
	cfg  Config
	deps Deps
}

// limits are the engine's caps.
func (w *tool) limits() noderuntime.WorkflowLimits {
	l := noderuntime.WorkflowLimits{MaxConcurrentAgents: w.cfg.MaxConcurrentAgents, MaxTotalAgents: w.cfg.MaxTotalAgents,
		MaxItemsPerCall: w.cfg.MaxItemsPerCall, SyncTimeoutMs: w.cfg.SyncTimeoutMs}
	if l.MaxConcurrentAgents == 0 {
		l.MaxConcurrentAgents = min(16, max(1, runtime.NumCPU()-2))
	}
	if l.MaxTotalAgents == 0 {
		l.MaxTotalAgents = DefaultMaxTotalAgents
	}
	if l.MaxItemsPerCall == 0 {
		l.MaxItemsPerCall = DefaultMaxItemsPerCall
	}
	if l.SyncTimeoutMs == 0 {
		l.SyncTimeoutMs = DefaultSyncTimeoutMs
	}
	return l
}

// errNoCaller refuses an agentless call (VERBATIM).
var errNoCaller = errors.New("workflow tool requires a calling agent (exec.agent was undefined)")

// metaStatement is upstream's check for an `export const meta` body.
var metaStatement = regexp.MustCompile(`^\s*export\s+const\s+meta\b`)

// run validates meta and the body, runs the body, and renders the result.
func (w *tool) run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		Script string          `json:"script"`
		Meta   json.RawMessage `json:"meta"`
		Args   json.RawMessage `json:"args"`
	}
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	if call.Agent() == nil {
		return pipeline.Output{}, errNoCaller
	}
	name, err := ValidateMeta(a.Meta)
	if err != nil {
		return pipeline.Output{}, err
	}
	if metaStatement.MatchString(a.Script) {
		return pipeline.Output{}, pipeline.NewError("WorkflowError", "SCRIPT_PARSE", "workflow meta rides the `meta` request field, not the script: remove the `export const meta = {...}` statement from the body")
	}
	if w.deps.Runtime == nil {
		return pipeline.Output{}, errors.New("workflow: no JavaScript runtime (node) is available")
	}
	pol, err := w.deps.Policy(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	r := newRunState(w, call, name)
	res, err := w.deps.Runtime.Run(ctx, noderuntime.Request{Code: a.Script, Call: r.hostCall, Policy: pol, Confiner: w.deps.Confiner,
		Workflow: &noderuntime.Workflow{Name: name, Args: a.Args, Limits: w.limits()}})
	if err != nil {
		return pipeline.Output{}, err
	}
	return r.finish(ctx, res)
}

// runState is one run of a body: its id, its agents, its events.
type runState struct {
	w      *tool
	call   *pipeline.Call
	runID  string
	name   string
	record bool // only a top-level call records its run

	mu      sync.Mutex
	started bool
}

// newRunState is a fresh run of call's body: a new run id, and its events
// recorded only when call is top-level (a workflow nested in another
// call, as run_code's sub-call, records none).
func newRunState(w *tool, call *pipeline.Call, name string) *runState {
	return &runState{w: w, call: call, runID: newUUID(), name: name, record: call.Parent() == nil}
}

// append records an event of the run in the calling agent's log.
func (r *runState) append(typ string, data any) {
	if !r.record || r.call.Agent().Session == nil {
		return
	}
	_, _ = r.call.Agent().Session.Append(typ, data)
}

type runStart struct {
	RunID string `json:"runId"`
	Name  string `json:"name"`
}

// hostCall answers the body's calls: "start" once it parsed (the run
// begins: run-start), "agent" for each agent().
func (r *runState) hostCall(ctx context.Context, _ int64, name string, args json.RawMessage) (json.RawMessage, error) {
	switch name {
	case "start":
		r.mu.Lock()
		r.started = true
		r.mu.Unlock()
		r.append(session.KindWorkflowRunStart, runStart{r.runID, r.name})
		return json.RawMessage(`{}`), nil
	case "agent":
		return r.agent(ctx, args)
	}
	return nil, fmt.Errorf("unknown binding %q", name)
}

// agentRequest is one agent() as the body asks it.
type agentRequest struct {
	Prompt   string          `json:"prompt"`
	Seq      int             `json:"seq"`
	Label    string          `json:"label"`
	Phase    *string         `json:"phase"`
	Schema   json.RawMessage `json:"schema"`
	Provider string          `json:"provider"`
	Model    string          `json:"model"`
	ReadOnly bool            `json:"readOnly"`
}

type agentStart struct {
	RunID   string  `json:"runId"`
	Seq     int     `json:"seq"`
	Label   string  `json:"label"`
	Phase   *string `json:"phase,omitempty"`
	ChildID string  `json:"childId"`
}

type agentEnd struct {
	RunID   string `json:"runId"`
	Seq     int    `json:"seq"`
	Outcome string `json:"outcome"`
}

// agent starts one one-shot child, records its start and end, and returns
// {outcome, value}: completed with the child's final text, failed, or
// cancelled; a child that cannot start is the call's error (the body's
// agent() then throws AGENT_START).
func (r *runState) agent(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var req agentRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, err
	}
	provider := r.w.cfg.Provider
	if provider == "" {
		provider = "spawn"
	}
	run, err := r.w.deps.Service.Start(ctx, provider, subagent.Request{Caller: r.call.Agent(), CallID: r.call.CallID(), Prompt: req.Prompt, ReadOnly: req.ReadOnly, StepLabel: req.Label, OutputSchema: req.Schema})
	if err != nil {
		return nil, errors.New(pipeline.ErrorMessage(err))
	}
	r.append(session.KindWorkflowAgentStart, agentStart{r.runID, req.Seq, req.Label, req.Phase, run.ID()})
	res, rerr := run.Result(ctx)
	outcome := "completed"
	switch {
	case ctx.Err() != nil:
		outcome = "cancelled"
	case rerr != nil:
		outcome = "error"
	case res.Stop != delegation.StopCompleted, req.Schema != nil && res.Structured == nil:
		outcome = "failed"
	}
	end := outcome
	if end == "error" {
		end = "failed"
	}
	r.append(session.KindWorkflowAgentEnd, agentEnd{r.runID, req.Seq, end})
	_ = run.Dispose()
	out := map[string]any{"outcome": outcome}
	switch {
	case outcome == "completed" && req.Schema != nil:
		out["value"] = res.Structured
	case outcome == "completed":
		out["value"] = delegation.OutputText(res.Output)
	case outcome == "error":
		out["message"] = pipeline.ErrorMessage(rerr)
	}
	return json.Marshal(out)
}

// finish records the run's end and renders the result: the return value
// as JSON.stringify(value, null, 2) clipped, or the failure.
func (r *runState) finish(ctx context.Context, res noderuntime.Result) (pipeline.Output, error) {
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	stop := "completed"
	var failure string
	switch {
	case res.Error != nil && res.Error.Kind == noderuntime.KindParse:
		return pipeline.Output{}, pipeline.NewError("WorkflowError", "SCRIPT_PARSE", res.Error.Message)
	case res.Error != nil && (res.Error.Kind == noderuntime.KindAbort || ctx.Err() != nil):
		stop, failure = "cancelled", "workflow run was cancelled (workflow run cancelled: parent step aborted)"
	case res.Error != nil:
		stop, failure = "error", "workflow run failed: "+res.Error.Message
	}
	if started {
		r.append(session.KindWorkflowRunEnd, map[string]string{"runId": r.runID, "stopReason": stop})
	}
	if failure != "" {
		return pipeline.Output{}, errors.New(failure)
	}
	var done struct {
		Value         json.RawMessage `json:"value"`
		AgentsStarted int             `json:"agentsStarted"`
		Lossy         bool            `json:"lossy"`
	}
	if err := json.Unmarshal(res.Value, &done); err != nil {
		return pipeline.Output{}, fmt.Errorf("workflow run failed: the runtime's result is not its completion: %w", err)
	}
	if done.Lossy {
		return pipeline.Output{}, errLossyValue
	}
	text, err := r.render(done.Value, done.AgentsStarted)
	if err != nil {
		return pipeline.Output{}, err
	}
	value, err := json.Marshal(toolValue{r.runID, done.AgentsStarted, done.Value})
	if err != nil {
		return pipeline.Output{}, err
	}
	return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(text)}, Value: value}, nil
}

// toolValue is the tool's value, in upstream's key order (a run_code
// program reads Object.keys of it).
type toolValue struct {
	RunID         string          `json:"runId"`
	AgentsStarted int             `json:"agentsStarted"`
	Result        json.RawMessage `json:"result"`
}

// errLossyValue is upstream's output snapshot refusing a return value that
// holds a -0 (VERBATIM): the run has completed, the call fails.
var errLossyValue = pipeline.NewError("ToolOutputError", "INVALID_TOOL_OUTPUT", `tool "workflow" returned invalid output: value is not lossless JSON`)

// render is the result text (VERBATIM): `workflow "<name>" completed (<n>
// agent|agents).\nReturn value:\n<JSON, indented 2>`, the JSON clipped at
// maxResultChars UTF-16 units with "\n… [truncated: <k> more characters]".
func (r *runState) render(value json.RawMessage, agents int) (string, error) {
	v, err := jsjson.Parse(value)
	if err != nil {
		return "", err
	}
	rendered := utf16.Encode([]rune(jsjson.StringifyIndent(v, "  ")))
	max := r.w.cfg.MaxResultChars
	if max == 0 {
		max = DefaultMaxResultChars
	}
	body := string(utf16.Decode(rendered))
	if len(rendered) > max {
		body = string(utf16.Decode(rendered[:max])) + "\n… [truncated: " + strconv.Itoa(len(rendered)-max) + " more characters]"
	}
	noun := "agents"
	if agents == 1 {
		noun = "agent"
	}
	return fmt.Sprintf("workflow %s completed (%d %s).\nReturn value:\n%s", jsjson.Quote(r.name), agents, noun, body), nil
}

// ValidateMeta checks meta as upstream's engine does and returns its name;
// the violations, joined by "; ", are one WorkflowError META_INVALID
// (VERBATIM texts).
func ValidateMeta(raw json.RawMessage) (string, error) {
	v, err := jsjson.Parse(raw)
	if err != nil || v.Kind != jsjson.Object {
		return "", metaInvalid([]string{"meta must be an object"})
	}
	var violations []string
	known := map[string]bool{"name": true, "description": true, "whenToUse": true, "phases": true}
	for _, m := range v.Members {
		if k := m.KeyString(); !known[k] {
			violations = append(violations, "meta."+k+" is not a recognized field (name/description/whenToUse/phases)")
		}
	}
	name := v.Get("name")
	if name == nil || name.Kind != jsjson.String || name.Str() == "" {
		violations = append(violations, "meta.name must be a non-empty string")
	}
	if d := v.Get("description"); d == nil || d.Kind != jsjson.String || d.Str() == "" {
		violations = append(violations, "meta.description must be a non-empty string")
	}
	if u := v.Get("whenToUse"); u != nil && u.Kind != jsjson.String {
		violations = append(violations, "meta.whenToUse must be a string")
	}
	violations = append(violations, phaseViolations(v.Get("phases"))...)
	if len(violations) > 0 {
		return "", metaInvalid(violations)
	}
	return name.Str(), nil
}

// phaseViolations checks meta.phases.
func phaseViolations(p *jsjson.Value) []string {
	if p == nil {
		return nil
	}
	if p.Kind != jsjson.Array {
		return []string{"meta.phases must be an array"}
	}
	var out []string
	for i, ph := range p.Elems {
		at := "meta.phases[" + strconv.Itoa(i) + "]"
		if ph.Kind != jsjson.Object {
			out = append(out, at+" must be an object")
			continue
		}
		for _, m := range ph.Members {
			switch k := m.KeyString(); k {
			case "title", "detail", "provider", "model":
			default:
				out = append(out, at+"."+k+" is not a recognized field")
			}
		}
		if t := ph.Get("title"); t == nil || t.Kind != jsjson.String || t.Str() == "" {
			out = append(out, at+".title must be a non-empty string")
		}
		for _, k := range []string{"detail", "provider", "model"} {
			if f := ph.Get(k); f != nil && f.Kind != jsjson.String {
				out = append(out, at+"."+k+" must be a string")
			}
		}
	}
	return out
}

func metaInvalid(violations []string) error {
	return pipeline.NewError("WorkflowError", "META_INVALID", "invalid meta: "+strings.Join(violations, "; "))
}

// newUUID is a random version-4 UUID (the run's id).
func newUUID() string { return session.NewID() }
