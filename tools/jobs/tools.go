package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Tool names.
const (
	OutputName = "job_output"
	KillName   = "job_kill"
	ListName   = "job_list"
)

// VERBATIM model-facing texts (upstream's tool-jobs, as the recordings' pin
// sidecars show them).
const (
	OutputDescription  = "Read a background job. Stream jobs return only output since the previous read; final-output jobs return their result after settlement. Every response ends with `[status: ...]`. Reads are non-blocking unless `wait: true`, which waits up to the configured cap."
	KillDescription    = "Request cancellation of a running background job by job id. Returns immediately; the job settles as killed once its work actually stops."
	ListDescription    = "List your background jobs (running and finished) with their ids, kinds, and statuses."
	JobIDDescription   = "Job id returned by the tool that started the background work."
	WaitDescription    = "Block until the job reaches a terminal status or the timeout expires. A timed-out wait returns [status: running] and leaves the job alive."
	TimeoutDescription = "Max wait in milliseconds (only meaningful with wait: true). Defaults to the configured wait timeout; capped by the configured maximum."
	ReasonDescription  = "Optional short reason, recorded in the log and forwarded to the job."
	// PromptSection is the tool:jobs prompt section (order 106).
	PromptSection = "Track every background job id you start. You are notified in-session when a job finishes — do not busy-poll or sleep on one; keep working on independent steps and do not duplicate a running job's work. Before giving a final answer, collect every still-relevant job with job_output (set wait: true only when you are genuinely blocked on it), and job_kill jobs that stopped mattering."
	// EmptyList is job_list's answer when there is no job.
	EmptyList = "(no background jobs)"
)

// Upstream's tool-jobs defaults.
const (
	DefaultWaitTimeoutMs    = 30000
	DefaultMaxWaitTimeoutMs = 600000
)

// Config configures the job tools.
type Config struct {
	// Registry is the job registry the tools read and kill (required).
	Registry *Registry
	// WaitTimeoutMs is a wait's default timeout (0: 30000).
	WaitTimeoutMs float64
	// MaxWaitTimeoutMs caps every wait (0: 600000); WaitTimeoutMs may not
	// exceed it.
	MaxWaitTimeoutMs float64
	// TaskWording words the descriptions as upstream did before it renamed
	// background tasks to jobs ("Stream tasks return", "the task settles",
	// "forwarded to the task"): what the model saw when the pwsh recordings
	// were made (their pins were never refreshed upstream, which skips them
	// on Linux).
	TaskWording bool
}

// taskWording rewords a description of the job tools as before the rename.
var taskWording = strings.NewReplacer(
	"Stream jobs return", "Stream tasks return", "final-output jobs return", "final-output tasks return",
	"the job settles", "the task settles", "the job reaches", "the task reaches",
	"leaves the job alive", "leaves the task alive", "forwarded to the job.", "forwarded to the task.",
)

// New returns the registrations of job_output (which brings the tool:jobs
// prompt section, order 106), job_kill and job_list over cfg.Registry: tools
// of the safety stack that answer from memory (no call yields to the host;
// a wait yields while it blocks). A call sees its own session's jobs and the
// unowned ones.
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.WaitTimeoutMs == 0 {
		cfg.WaitTimeoutMs = DefaultWaitTimeoutMs
	}
	if cfg.MaxWaitTimeoutMs == 0 {
		cfg.MaxWaitTimeoutMs = DefaultMaxWaitTimeoutMs
	}
	if !(cfg.WaitTimeoutMs > 0) || !(cfg.MaxWaitTimeoutMs > 0) || cfg.WaitTimeoutMs > cfg.MaxWaitTimeoutMs {
		return nil, fmt.Errorf("tool-jobs: waitTimeoutMs (%v) must be positive and at most maxWaitTimeoutMs (%v)", cfg.WaitTimeoutMs, cfg.MaxWaitTimeoutMs)
	}
	if cfg.Registry == nil {
		return nil, errors.New("tool-jobs: a job registry is required")
	}
	t := jobTools{reg: cfg.Registry, cfg: cfg}
	word := func(s string) string { return s }
	if cfg.TaskWording {
		word = taskWording.Replace
	}
	jobID := pipeline.Param{Name: "job_id", Type: "string", Description: JobIDDescription}
	defs := []pipeline.Tool{
		{Name: OutputName, Description: word(OutputDescription), Run: t.output, Parameters: pipeline.ObjectSchema([]pipeline.Param{
			jobID,
			{Name: "wait", Type: "boolean", Description: word(WaitDescription)},
			{Name: "timeout_ms", Type: "number", Description: TimeoutDescription},
		}, []string{"job_id"})},
		{Name: KillName, Description: word(KillDescription), Run: t.kill, Parameters: pipeline.ObjectSchema([]pipeline.Param{
			jobID,
			{Name: "reason", Type: "string", Description: word(ReasonDescription)},
		}, []string{"job_id"})},
		{Name: ListName, Description: ListDescription, Run: t.list, Parameters: pipeline.ObjectSchema(nil, nil)},
	}
	out := make([]toolreg.Tool, len(defs))
	for i, d := range defs {
		out[i] = toolreg.Tool{Def: d, Yields: toolreg.NoYield, SafetyStack: true}
	}
	out[0].Section = &toolreg.Section{Name: "tool:jobs", Order: 106, Text: PromptSection}
	return out, nil
}

type jobTools struct {
	reg *Registry
	cfg Config
}

// decodeArgs reads the arguments the pipeline's schema check passed
// ([pipeline.CheckArgs]: job_id a required string, wait a boolean,
// timeout_ms a finite number) into fields, by their exact keys (an
// undeclared argument is not read). A body run without that check (a test)
// is refused when they are not of those types.
func decodeArgs(call *pipeline.Call, fields map[string]any) error {
	var raw map[string]json.RawMessage
	if err := call.DecodeArgs(&raw); err != nil || raw == nil {
		return errors.New("invalid arguments: expected an object")
	}
	for key, dst := range fields {
		if v, ok := raw[key]; ok && (string(v) == "null" || json.Unmarshal(v, dst) != nil) {
			return fmt.Errorf("invalid arguments: %s is not of its schema's type", key)
		}
	}
	return nil
}

// job decodes job_id (and the tool's other arguments into more) and
// resolves it: a non-empty string naming a job the caller may see.
func (t jobTools) job(call *pipeline.Call, more map[string]any) (*Job, error) {
	var id string
	fields := map[string]any{"job_id": &id}
	maps.Copy(fields, more)
	if err := decodeArgs(call, fields); err != nil {
		return nil, err
	}
	if id == "" {
		// upstream's text ends in JSON.stringify(job_id); past the schema
		// check the only id it refuses is the empty string
		return nil, errors.New(`invalid job_id: expected a non-empty string, got ""`)
	}
	return t.reg.Get(call.SessionID(), id)
}

// waitTimeout is min(timeout_ms ?? waitTimeoutMs, maxWaitTimeoutMs); ok is
// false when it is not a positive finite number, and text is then
// JSON.stringify of it: "null" for an infinite one (only a configured
// default can be: the schema admits finite numbers), else the number as
// JavaScript prints it.
func (t jobTools) waitTimeout(req *float64) (ms float64, text string, ok bool) {
	ms = t.cfg.WaitTimeoutMs
	if req != nil {
		ms = *req
	}
	ms = math.Min(ms, t.cfg.MaxWaitTimeoutMs)
	switch {
	case math.IsInf(ms, 0):
		return ms, "null", false
	case ms <= 0:
		return ms, jsjson.FormatNumber(ms), false
	}
	return ms, "", true
}

func (t jobTools) output(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var wait bool
	var timeout *float64
	j, err := t.job(call, map[string]any{"wait": &wait, "timeout_ms": &timeout})
	if err != nil {
		return pipeline.Output{}, err
	}
	if wait {
		ms, text, ok := t.waitTimeout(timeout)
		if !ok {
			return pipeline.Output{}, fmt.Errorf("invalid wait timeout: expected a positive number of milliseconds, got %s", text)
		}
		if _, err := j.WaitFor(ctx, time.Duration(ms*float64(time.Millisecond))); err != nil {
			return pipeline.Output{}, ErrWaitAborted
		}
	}
	rd := j.Read()
	return textOutput(rd.Text(), outputValue{Text: rd.Body(), Job: j.publicAs(rd.Status, rd.Detail)}), nil
}

// kill is job_kill; its reason is only logged in the call's arguments, as
// upstream's is never forwarded to the process.
func (t jobTools) kill(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	j, err := t.job(call, nil)
	if err != nil {
		return pipeline.Output{}, err
	}
	if j.Cancel("job_kill") {
		return textOutput(render.KillRequested(j.ID()), killValue{Outcome: "cancellation-requested", Job: j.public()}), nil
	}
	status, detail := j.StatusDetail()
	text := "job " + j.ID() + " had already finished " + render.StatusLine(status, detail)
	return textOutput(text, killValue{Outcome: "already-finished", Job: j.public()}), nil
}

func (t jobTools) list(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	jobs := t.reg.List(call.SessionID())
	if len(jobs) == 0 {
		return textOutput(EmptyList, []publicJob{}), nil
	}
	lines := make([]string, len(jobs))
	pub := make([]publicJob, len(jobs))
	for i, j := range jobs {
		status, _ := j.StatusDetail()
		lines[i] = j.ID() + " [" + j.Kind + "] " + status + " — " + j.Label
		pub[i] = j.public()
	}
	return textOutput(strings.Join(lines, "\n"), pub), nil
}

// publicJob is the job snapshot of the tools' values (never shown in
// text), in upstream's key order (publicJob of dsh-tool-jobs).
type publicJob struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Label      string `json:"label"`
	Status     string `json:"status"`
	Detail     string `json:"detail,omitempty"`
	StartedAt  int64  `json:"startedAt"`
	FinishedAt *int64 `json:"finishedAt,omitempty"`
}

// outputValue is job_output's value: the read's text without the status
// line, and the job.
type outputValue struct {
	Text string    `json:"text"`
	Job  publicJob `json:"job"`
}

// killValue is job_kill's value.
type killValue struct {
	Outcome string    `json:"outcome"`
	Job     publicJob `json:"job"`
}

// public is the job's snapshot now; finishedAt once it settled.
func (j *Job) public() publicJob {
	status, detail := j.StatusDetail()
	return j.publicAs(status, detail)
}

// publicAs is the job's value with the status and detail one snapshot saw
// (a read's, so text and value agree); finishedAt is there exactly when
// that status is a settled one.
func (j *Job) publicAs(status, detail string) publicJob {
	p := publicJob{ID: j.ID(), Kind: j.Kind, Label: j.Label, Status: status, Detail: detail, StartedAt: j.Started.UnixMilli()}
	if status != StatusRunning && status != StatusStopping {
		j.mu.Lock()
		ms := j.finished.UnixMilli()
		j.mu.Unlock()
		p.FinishedAt = &ms
	}
	return p
}

func textOutput(text string, value any) pipeline.Output {
	v, _ := json.Marshal(value)
	return pipeline.Output{Value: v, Content: []pipeline.Block{pipeline.TextBlock(text)}}
}
