package jobs

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// agent returns an agent whose session id is id.
func agent(t *testing.T, id string) *pipeline.Agent {
	t.Helper()
	return &pipeline.Agent{ID: "root", Session: sessiontest.New(t, id, "")}
}

type toolsHarness struct {
	reg  *pipeline.Registry
	jobs *Registry
}

func newTools(t *testing.T, cfg Config) (*toolsHarness, chan Notice) {
	t.Helper()
	jr, ch := newReg(t, Options{})
	tools, err := defsOf(jr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg := pipelinetest.Registry(t, tools...)
	return &toolsHarness{reg: reg, jobs: jr}, ch
}

func (h *toolsHarness) call(ctx context.Context, a *pipeline.Agent, name, args string) pipeline.Result {
	return h.reg.Execute(pipeline.NewCall("c", name, json.RawMessage(args), a, ctx))
}

// TestSchemasAreUpstreams compares the three schemas with upstream's
// sidecar text (tool-schemas.expected.json) byte for byte.
func TestSchemasAreUpstreams(t *testing.T) {
	want := map[string]string{
		"job_kill":   `{"type":"object","properties":{"job_id":{"type":"string","description":"Job id returned by the tool that started the background work."},"reason":{"type":"string","description":"Optional short reason, recorded in the log and forwarded to the job."}},"required":["job_id"]}`,
		"job_list":   `{"type":"object","properties":{}}`,
		"job_output": `{"type":"object","properties":{"job_id":{"type":"string","description":"Job id returned by the tool that started the background work."},"wait":{"type":"boolean","description":"Block until the job reaches a terminal status or the timeout expires. A timed-out wait returns [status: running] and leaves the job alive."},"timeout_ms":{"type":"number","description":"Max wait in milliseconds (only meaningful with wait: true). Defaults to the configured wait timeout; capped by the configured maximum."}},"required":["job_id"]}`,
	}
	tools, err := defsOf(NewRegistry(Options{}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if string(tl.Parameters) != want[tl.Name] {
			t.Errorf("%s parameters\n%s\nwant\n%s", tl.Name, tl.Parameters, want[tl.Name])
		}
	}
}

func TestToolsConfig(t *testing.T) {
	if _, err := defsOf(NewRegistry(Options{}), Config{WaitTimeoutMs: 700000}); err == nil {
		t.Error("a wait timeout above the cap was accepted")
	}
	if _, err := defsOf(NewRegistry(Options{}), Config{WaitTimeoutMs: 600000}); err != nil {
		t.Errorf("a wait timeout equal to the cap was refused: %v", err)
	}
	if _, err := defsOf(nil, Config{}); err == nil {
		t.Error("no registry was accepted")
	}
}

func TestJobIDErrors(t *testing.T) {
	h, _ := newTools(t, Config{})
	a, other := agent(t, "s"), agent(t, "other")
	if _, err := h.jobs.Start(spec("other", "sleep 5"), bash("sleep 5")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ tool, args, want string }{
		{"job_output", `{"job_id":""}`, `Error: invalid job_id: expected a non-empty string, got ""`},
		{"job_output", `{"job_id":"bash-7"}`, "Error: unknown job bash-7"},
		{"job_kill", `{"job_id":"bash-1"}`, "Error: job bash-1 belongs to another session"},
		{"job_output", `{"job_id":"bash-1","wait":true,"timeout_ms":0}`, "Error: job bash-1 belongs to another session"},
	}
	for _, tc := range tests {
		r := h.call(context.Background(), a, tc.tool, tc.args)
		if !r.IsError || r.Text() != tc.want || r.Error.Info != nil {
			t.Errorf("%s %s = %q (info %+v), want %q without a code", tc.tool, tc.args, r.Text(), r.Error, tc.want)
		}
	}
	// A missing or ill-typed job_id fails the schema check before the tool
	// (ToolArgsError/INVALID_ARGS): upstream's job_id is a required string.
	for _, tc := range []struct{ tool, args, want string }{
		{"job_output", `{}`, `Error: invalid arguments: missing required property "job_id"`},
		{"job_kill", `{"job_id":5}`, `Error: invalid arguments: "job_id" must be a string`},
		{"job_output", `{"job_id":"bash-1","wait":"yes","timeout_ms":"soon"}`, `Error: invalid arguments: "wait" must be a boolean; "timeout_ms" must be a number`},
	} {
		r := h.call(context.Background(), a, tc.tool, tc.args)
		if r.Text() != tc.want || r.Error.Info == nil || r.Error.Info.Code != "INVALID_ARGS" {
			t.Errorf("%s %s = %q (info %+v), want %q with INVALID_ARGS", tc.tool, tc.args, r.Text(), r.Error, tc.want)
		}
	}
	if r := h.call(context.Background(), other, "job_kill", `{"job_id":"bash-1"}`); r.Text() != "requested cancellation of job bash-1" {
		t.Errorf("owner's kill: %q", r.Text())
	}
}

func TestOutputWait(t *testing.T) {
	h, ch := newTools(t, Config{WaitTimeoutMs: 50})
	a := agent(t, "s")
	if _, err := h.jobs.Start(spec("s", "sleep 0.4; echo late"), bash("sleep 0.4; echo late")); err != nil {
		t.Fatal(err)
	}
	if r := h.call(context.Background(), a, "job_output", `{"job_id":"bash-1","timeout_ms":1}`); r.Text() != "(no new output)\n[status: running]" {
		t.Errorf("without wait (timeout_ms ignored): %q", r.Text())
	}
	start := time.Now()
	if r := h.call(context.Background(), a, "job_output", `{"job_id":"bash-1","wait":true}`); r.Text() != "(no new output)\n[status: running]" || r.IsError {
		t.Errorf("a timed-out wait (default 50ms): %q", r.Text())
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Error("the wait did not wait")
	}
	if r := h.call(context.Background(), a, "job_output", `{"job_id":"bash-1","wait":true,"timeout_ms":20000}`); r.Text() != "late\n[status: completed, exit code: 0]" {
		t.Errorf("a wait until settlement: %q", r.Text())
	}
	noNotice(t, ch) // the pending wait reported it
	for _, tc := range []struct{ args, got string }{
		{`{"job_id":"bash-1","wait":true,"timeout_ms":0}`, "0"},
		{`{"job_id":"bash-1","wait":true,"timeout_ms":-5}`, "-5"},
		// JSON.stringify of the number, not the spelling sent
		{`{"job_id":"bash-1","wait":true,"timeout_ms":-5.0}`, "-5"},
		{`{"job_id":"bash-1","wait":true,"timeout_ms":-0.0000001}`, "-1e-7"},
	} {
		r := h.call(context.Background(), a, "job_output", tc.args)
		if want := "Error: invalid wait timeout: expected a positive number of milliseconds, got " + tc.got; r.Text() != want {
			t.Errorf("%s = %q, want %q", tc.args, r.Text(), want)
		}
	}
	if _, err := h.jobs.Start(spec("s", "sleep 30"), bash("sleep 30")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if r := h.call(ctx, a, "job_output", `{"job_id":"bash-2","wait":true,"timeout_ms":20000}`); r.Text() != "Error: wait aborted" || r.Error.Info != nil {
		t.Errorf("an aborted wait: %q", r.Text())
	}
	if r := h.call(context.Background(), a, "job_list", `{}`); !strings.Contains(r.Text(), "bash-2 [bash] running — sleep 30") {
		t.Errorf("the job did not keep running after the aborted wait: %q", r.Text())
	}
}

// TestWaitTimeoutEdges: timeout_ms past float64's range (Infinity) is refused
// as no lossless argument; a configured default that is infinite makes a wait without
// timeout_ms fail as upstream's does (JSON.stringify(Infinity) is null),
// while a requested finite one (capped by nothing) waits.
func TestWaitTimeoutEdges(t *testing.T) {
	h, _ := newTools(t, Config{WaitTimeoutMs: math.Inf(1), MaxWaitTimeoutMs: math.Inf(1)})
	a := agent(t, "s")
	if _, err := h.jobs.Start(spec("s", "true"), bash("true")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ args, want string }{
		// 1e999 reads as Infinity, which no argument may hold: refused
		// before the schema, as upstream's arguments snapshot refuses it.
		{`{"job_id":"bash-1","wait":true,"timeout_ms":1e999}`, `Error: tool execution arguments must be losslessly JSON-serializable`},
		{`{"job_id":"bash-1","wait":true}`, "Error: invalid wait timeout: expected a positive number of milliseconds, got null"},
		{`{"job_id":"bash-1","wait":true,"timeout_ms":20000}`, "(no new output)\n[status: completed, exit code: 0]"},
	} {
		if r := h.call(context.Background(), a, "job_output", tc.args); r.Text() != tc.want {
			t.Errorf("%s = %q, want %q", tc.args, r.Text(), tc.want)
		}
	}
}

// TestBodiesWithoutTheSchemaCheck: a job tool's body run directly, without
// the pipeline's argument check, refuses arguments of the wrong type and
// touches no job; it reads only the arguments it declares.
func TestBodiesWithoutTheSchemaCheck(t *testing.T) {
	jr, _ := newReg(t, Options{})
	tools, err := defsOf(jr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	a := agent(t, "s")
	if _, err := jr.Start(spec("s", "sleep 30"), bash("sleep 30")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tool, args, want string }{
		{OutputName, `[]`, "invalid arguments: expected an object"},
		{KillName, `[]`, "invalid arguments: expected an object"},
		{OutputName, `{"job_id":5}`, "invalid arguments: job_id is not of its schema's type"},
		{KillName, `{"job_id":null}`, "invalid arguments: job_id is not of its schema's type"},
		{OutputName, `{"job_id":"bash-1","wait":"yes"}`, "invalid arguments: wait is not of its schema's type"},
		{OutputName, `{"job_id":"bash-1","wait":true,"timeout_ms":"soon"}`, "invalid arguments: timeout_ms is not of its schema's type"},
	} {
		i := slices.IndexFunc(tools, func(tl pipeline.Tool) bool { return tl.Name == tc.tool })
		call := pipeline.NewCall("c", tc.tool, json.RawMessage(tc.args), a, context.Background())
		if _, err := tools[i].Run(context.Background(), call); err == nil || err.Error() != tc.want {
			t.Errorf("%s %s: %v, want %q", tc.tool, tc.args, err, tc.want)
		}
	}
	if j, err := jr.Get("s", "bash-1"); err != nil || j.Read().Status != "running" {
		t.Errorf("the job was touched: %v", err)
	}
	// job_kill reads no argument it does not declare
	i := slices.IndexFunc(tools, func(tl pipeline.Tool) bool { return tl.Name == KillName })
	call := pipeline.NewCall("c", KillName, json.RawMessage(`{"job_id":"bash-1","wait":"yes","timeout_ms":"soon"}`), a, context.Background())
	if out, err := tools[i].Run(context.Background(), call); err != nil || out.Content[0].Text != "requested cancellation of job bash-1" {
		t.Errorf("job_kill with job_output's arguments of other types: %+v, %v", out, err)
	}
}

func TestKillAndList(t *testing.T) {
	h, ch := newTools(t, Config{})
	a := agent(t, "s")
	if r := h.call(context.Background(), a, "job_list", `{}`); r.Text() != "(no background jobs)" {
		t.Errorf("empty list: %q", r.Text())
	}
	const trapped = "trap 'sleep 0.5; exit 0' TERM; sleep 30 & wait"
	long, _ := h.jobs.Start(spec("s", trapped), Exec(ExecSpec{Argv: []string{"bash", "-c", trapped}, Dir: os.TempDir(), Grace: 10 * time.Second}))
	short, _ := h.jobs.Start(spec("s", "echo a\necho b"), bash("echo a\necho b"))
	waittest.Closed(t, short.Done(), "the short job")
	waitNotice(t, ch)
	time.Sleep(100 * time.Millisecond) // let bash install its trap
	if r := h.call(context.Background(), a, "job_kill", `{"job_id":"bash-1","reason":"free the slot"}`); r.Text() != "requested cancellation of job bash-1" || r.IsError {
		t.Errorf("kill: %q", r.Text())
	}
	if r := h.call(context.Background(), a, "job_list", `{}`); r.Text() != "bash-1 [bash] stopping — "+trapped+"\nbash-2 [bash] completed — echo a\necho b" {
		t.Errorf("list:\n%s", r.Text())
	}
	waittest.Closed(t, long.Done(), "the long job")
	noNotice(t, ch)
	if r := h.call(context.Background(), a, "job_kill", `{"job_id":"bash-2"}`); r.Text() != "job bash-2 had already finished [status: completed, exit code: 0]" || r.IsError {
		t.Errorf("kill of a finished job: %q", r.Text())
	}
	if r := h.call(context.Background(), a, "job_list", `{}`); r.Text() != "bash-1 [bash] killed — "+trapped+"\nbash-2 [bash] completed — echo a\necho b" {
		t.Errorf("list after settlement:\n%s", r.Text())
	}
	// it exited on its own after job_kill asked it to stop: killed before exit
	if r := h.call(context.Background(), a, "job_output", `{"job_id":"bash-1"}`); r.Text() != "(no new output)\n[status: killed, killed before exit]" {
		t.Errorf("read of the trapped job:\n%s", r.Text())
	}
}

// TestValuesAreUpstreams checks the canonical values a run_code program
// gets (dsh-tool-jobs: job_output {text, job}, job_list an array, job_kill
// {outcome, job}; the job in publicJob's key order, finishedAt once
// settled), with times replaced by T.
func TestValuesAreUpstreams(t *testing.T) {
	h, _ := newTools(t, Config{})
	a := agent(t, "s")
	stamp := regexp.MustCompile(`("(?:startedAt|finishedAt)":)\d+`)
	times := func(v json.RawMessage) string { return stamp.ReplaceAllString(string(v), "${1}T") }
	if r := h.call(context.Background(), a, "job_list", `{}`); string(r.Value) != `[]` {
		t.Errorf("empty job_list value %s", r.Value)
	}
	running, _ := h.jobs.Start(spec("s", "sleep 30"), bash("sleep 30"))
	if r := h.call(context.Background(), a, "job_output", `{"job_id":"bash-1"}`); times(r.Value) != `{"text":"","job":{"id":"bash-1","kind":"bash","label":"sleep 30","status":"running","startedAt":T}}` {
		t.Errorf("job_output of a running job: %s", r.Value)
	}
	if _, err := h.jobs.Start(spec("s", "echo JOBOUT; exit 5"), bash("echo JOBOUT; exit 5")); err != nil {
		t.Fatal(err)
	}
	want := `{"text":"JOBOUT\n","job":{"id":"bash-2","kind":"bash","label":"echo JOBOUT; exit 5","status":"completed","detail":"exit code: 5","startedAt":T,"finishedAt":T}}`
	if r := h.call(context.Background(), a, "job_output", `{"job_id":"bash-2","wait":true}`); times(r.Value) != want {
		t.Errorf("job_output value\n got %s\nwant %s", times(r.Value), want)
	}
	want = `{"outcome":"already-finished","job":{"id":"bash-2","kind":"bash","label":"echo JOBOUT; exit 5","status":"completed","detail":"exit code: 5","startedAt":T,"finishedAt":T}}`
	if r := h.call(context.Background(), a, "job_kill", `{"job_id":"bash-2"}`); times(r.Value) != want {
		t.Errorf("job_kill value\n got %s\nwant %s", times(r.Value), want)
	}
	want = `[{"id":"bash-1","kind":"bash","label":"sleep 30","status":"running","startedAt":T},{"id":"bash-2","kind":"bash","label":"echo JOBOUT; exit 5","status":"completed","detail":"exit code: 5","startedAt":T,"finishedAt":T}]`
	if r := h.call(context.Background(), a, "job_list", `{}`); times(r.Value) != want {
		t.Errorf("job_list value\n got %s\nwant %s", times(r.Value), want)
	}
	running.Cancel("test")
	waittest.Closed(t, running.Done(), "the running job")
}

// TestOutputWaitIsCapped: a wait asks for far more than the configured
// maximum and gets the maximum: it returns the running status. Without the
// cap it would wait until the test's own deadline cancelled it ("wait
// aborted"), never for the 10^9 ms it asked.
func TestOutputWaitIsCapped(t *testing.T) {
	h, _ := newTools(t, Config{WaitTimeoutMs: 50, MaxWaitTimeoutMs: 200})
	a := agent(t, "s")
	if _, err := h.jobs.Start(spec("s", "sleep 30"), bash("sleep 30")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if r := h.call(ctx, a, "job_output", `{"job_id":"bash-1","wait":true,"timeout_ms":1000000000}`); r.Text() != "(no new output)\n[status: running]" || r.IsError {
		t.Errorf("a wait past the cap: %q, want the running status after the 200ms cap", r.Text())
	}
	asked := 1e9
	if ms, _, ok := (jobTools{cfg: Config{WaitTimeoutMs: 50, MaxWaitTimeoutMs: 200}}).waitTimeout(&asked); !ok || ms != 200 {
		t.Errorf("waitTimeout(1e9) = %v, %v; want the cap 200", ms, ok)
	}
}

// TestTaskWording pins the pre-rename wording against the pwsh recording's
// sidecar texts.
func TestTaskWording(t *testing.T) {
	tools, err := defsOf(NewRegistry(Options{}), Config{TaskWording: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		OutputName: "Read a background job. Stream tasks return only output since the previous read; final-output tasks return their result after settlement. Every response ends with `[status: ...]`. Reads are non-blocking unless `wait: true`, which waits up to the configured cap.",
		KillName:   "Request cancellation of a running background job by job id. Returns immediately; the task settles as killed once its work actually stops.",
		ListName:   ListDescription,
	}
	for _, tl := range tools {
		if tl.Description != want[tl.Name] {
			t.Errorf("%s: %q", tl.Name, tl.Description)
		}
	}
	params := string(tools[0].Parameters) + string(tools[1].Parameters)
	for _, s := range []string{"Block until the task reaches a terminal status or the timeout expires. A timed-out wait returns [status: running] and leaves the task alive.", "Optional short reason, recorded in the log and forwarded to the task."} {
		if !strings.Contains(params, s) {
			t.Errorf("parameters lack %q", s)
		}
	}
}

// defsOf are the definitions New registers over reg with cfg.
func defsOf(reg *Registry, cfg Config) ([]pipeline.Tool, error) {
	cfg.Registry = reg
	regs, err := New(cfg)
	return toolreg.Defs(regs...), err
}
