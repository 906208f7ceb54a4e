package bash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/jobs"
)

func TestPreAbortedBackgroundStartsNothing(t *testing.T) {
	ws := t.TempDir()
	reg, _ := newJobs(t)
	tool := newTool(t, Config{}, Deps{Jobs: reg})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := runTool(t, tool, ctx, call(agent(t, "s", ws), cmd("touch "+ws+"/ran", "run_in_background", true)))
	abortedBeforeStart(t, err, ws, reg)
}

// abortedBeforeStart fails t unless err is the abort (ABORTED) and the
// command (which would create ws/ran) never started, in the foreground or as
// a job of session s.
func abortedBeforeStart(t *testing.T, err error, ws string, reg *jobs.Registry) {
	t.Helper()
	if !pipeline.HasCode(err, pipeline.CodeAborted) {
		t.Errorf("err = %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(ws + "/ran"); err == nil || len(reg.List("s")) != 0 {
		t.Error("something started after the abort")
	}
}

// TestForegroundIsNotAJob: a foreground command never enters the registry:
// while it runs, job_list shows nothing and job_kill knows no job, and the
// next background start is bash-1.
func TestForegroundIsNotAJob(t *testing.T) {
	ws := t.TempDir()
	reg, _ := newJobs(t)
	tool := newTool(t, Config{Grace: time.Second}, Deps{Jobs: reg})
	ag := agent(t, "s", ws)
	seen := make(chan string, 2)
	go func() {
		for deadline := time.Now().Add(waittest.Deadline); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(ws + "/started"); err == nil {
				break
			}
		}
		jt := jobTools(t, reg)
		for _, tl := range []pipeline.Tool{jt[2], jt[1]} {
			r := pipeline.NewRegistry()
			r.Register(tl)
			seen <- r.Execute(pipeline.NewCall("k", tl.Name, json.RawMessage(`{"job_id":"bash-1"}`), ag, nil)).Text()
		}
	}()
	got, err := run(t, tool, call(ag, cmd("touch started; sleep 0.3; echo fg")))
	if err != nil || got != "fg\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if list, kill := waittest.Recv(t, seen, "job_list's result"), waittest.Recv(t, seen, "job_kill's result"); list != "(no background jobs)" || kill != "Error: unknown job bash-1" {
		t.Errorf("while the foreground command ran: job_list %q, job_kill %q", list, kill)
	}
	if got, _ := run(t, tool, call(ag, cmd("true", "run_in_background", true))); got != "started background job bash-1" {
		t.Errorf("first background start after a foreground call: %q", got)
	}
}

func TestRegistryRefusalFallsBackToDeadlineKill(t *testing.T) {
	ws := t.TempDir()
	reg := jobs.NewRegistry(jobs.Options{MaxConcurrentJobsPerOwner: 1})
	t.Cleanup(func() { reg.Close(5 * time.Second) })
	var warned []string
	tool := newTool(t, Config{Grace: time.Second}, Deps{Jobs: reg, Warn: func(s string) { warned = append(warned, s) }})
	ag := agent(t, "s", ws)
	if got, _ := run(t, tool, call(ag, cmd("sleep 30", "run_in_background", true))); got != "started background job bash-1" {
		t.Fatalf("got %q", got)
	}
	got, err := run(t, tool, call(ag, cmd("sleep 30", "timeoutMs", 100)))
	if err != nil || got != "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]" {
		t.Errorf("got %q, %v", got, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "refused") {
		t.Errorf("warnings = %q", warned)
	}
}

// Parallel calls of one tool with different escalations never leak a
// granted mode into another call.
func TestParallelCallsKeepTheirOwnMode(t *testing.T) {
	r := newEscalationRig(t, sandbox.ReadOnly, pipeline.AllowedOnce, nil)
	tool, ws, rec := r.tool, r.ws, r.rec
	ag := agent(t, "s", ws)
	const n = 12
	var wg sync.WaitGroup
	results := make([]string, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := cmd(fmt.Sprintf("touch f%d && echo wrote", i))
			if i%2 == 0 {
				args["sandbox_permissions"], args["justification"] = "workspace-write", "test"
			}
			results[i], errs[i] = run(t, tool, call(ag, args))
		}()
	}
	waittest.Group(t, &wg, "the parallel calls to return")
	for i := 0; i < n; i++ {
		_, statErr := os.Stat(filepath.Join(ws, fmt.Sprintf("f%d", i)))
		if i%2 == 0 && (errs[i] != nil || results[i] != "wrote\n" || statErr != nil) {
			t.Errorf("escalated call %d: %q, %v, %v", i, results[i], errs[i], statErr)
		}
		if i%2 == 1 && (errs[i] != nil || !strings.Contains(results[i], sandbox.DenialMarker(sandbox.ReadOnly)) || statErr == nil) {
			t.Errorf("plain call %d leaked a wider mode: %q, %v", i, results[i], errs[i])
		}
	}
	ww := 0
	for _, m := range rec.calls() {
		if m == sandbox.WorkspaceWrite {
			ww++
		}
	}
	if ww != n/2 || len(rec.calls()) != n {
		t.Errorf("confined modes = %v", rec.calls())
	}
}

func TestJobOutputAcrossTheTail(t *testing.T) {
	ws := t.TempDir()
	reg, ch := newJobs(t)
	tool := newTool(t, Config{MaxOutputBytes: 64}, Deps{Jobs: reg})
	ag := agent(t, "s", ws)
	read := func() string {
		out, err := jobTools(t, reg)[0].Run(context.Background(), pipeline.NewCall("r", "job_output", json.RawMessage(`{"job_id":"bash-1"}`), ag, nil))
		if err != nil {
			t.Fatal(err)
		}
		return out.Content[0].Text
	}
	gate := ws + "/gate"
	first := strings.Repeat("a", 39) + "\n"
	second := strings.Repeat("b", 59) + "\n"
	command := "printf '" + first + "'; while [ ! -e " + gate + " ]; do sleep 0.02; done; printf '" + second + "'"
	if got, _ := run(t, tool, call(ag, cmd(command, "run_in_background", true))); got != "started background job bash-1" {
		t.Fatalf("got %q", got)
	}
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got = read(); got != "(no new output)\n[status: running]" {
			break
		}
	}
	if got != first+"[status: running]" {
		t.Fatalf("first read %q", got)
	}
	os.WriteFile(gate, nil, 0o600)
	wait(t, ch)
	// the stream outgrew the 64-byte tail: the delta comes from the full-output file, exactly
	if got := read(); got != second+"[status: completed, exit code: 0]" {
		t.Errorf("second read %q", got)
	}
}

func TestJobOutputLossNotice(t *testing.T) {
	ws := t.TempDir()
	reg, ch := newJobs(t)
	tool := newTool(t, Config{MaxOutputBytes: 100}, Deps{Jobs: reg})
	ag := agent(t, "s", ws)
	run(t, tool, call(ag, cmd("seq 1 3000", "run_in_background", true)))
	wait(t, ch)
	out, err := jobTools(t, reg)[0].Run(context.Background(), pipeline.NewCall("r", "job_output", json.RawMessage(`{"job_id":"bash-1"}`), ag, nil))
	if err != nil {
		t.Fatal(err)
	}
	text := out.Content[0].Text
	i := strings.Index(text, "[some output was dropped from memory; full output: ")
	if i < 0 || !strings.HasSuffix(text[:i], "2999\n3000\n") || !strings.HasSuffix(text, "]\n[status: completed, exit code: 0]") {
		t.Fatalf("read = %q", text)
	}
	path := strings.TrimSuffix(text[i+len("[some output was dropped from memory; full output: "):], "]\n[status: completed, exit code: 0]")
	full, _ := os.ReadFile(path)
	want, _ := exec.Command("seq", "1", "3000").Output()
	if string(full) != string(want) {
		t.Errorf("full output %s is not the complete stream", path)
	}
	upstreamShape(t, path)
	out, _ = jobTools(t, reg)[0].Run(context.Background(), pipeline.NewCall("r", "job_output", json.RawMessage(`{"job_id":"bash-1"}`), ag, nil))
	if got := out.Content[0].Text; got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("second read %q", got)
	}
}

func TestCanonicalValue(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{}, Deps{})
	out, err := runTool(t, tool, context.Background(), call(agent(t, "s", ws), cmd("echo out; echo err >&2; exit 4")))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(out.Value, &v); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"kind": "foreground", "exitCode": 4.0, "signal": nil, "timedOut": false, "aborted": false, "timeoutMs": 60000.0,
		"stdout": map[string]any{"text": "out\n", "truncated": false}, "stderr": map[string]any{"text": "err\n", "truncated": false}}
	if fmt.Sprint(v) != fmt.Sprint(want) {
		t.Errorf("value = %v\nwant    %v", v, want)
	}
	// upstream's key order: a run_code program may return the value whole
	if want := `{"kind":"foreground","exitCode":4,"signal":null,"timedOut":false,"aborted":false,"timeoutMs":60000,"stdout":{"text":"out\n","truncated":false},"stderr":{"text":"err\n","truncated":false}}`; string(out.Value) != want {
		t.Errorf("value bytes %s\nwant        %s", out.Value, want)
	}
}

// TestCanonicalValueUnderAConfiningExecutor: with a confiner mounted, a
// foreground run under danger-full-access (which the confiner never sees)
// still reports its mode, as upstream's sandboxing executor does; without a
// confiner (TestCanonicalValue) there is no sandbox key.
func TestCanonicalValueUnderAConfiningExecutor(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.DangerFullAccess, ws), Confiner: nopConfiner})
	out, err := runTool(t, tool, context.Background(), call(agent(t, "s", ws), cmd("echo out; echo err >&2; exit 3")))
	if err != nil {
		t.Fatal(err)
	}
	// the recorded value (oracle recording run-code-variants, turn 1 step 1)
	if want := `{"kind":"foreground","exitCode":3,"signal":null,"timedOut":false,"aborted":false,"timeoutMs":60000,"stdout":{"text":"out\n","truncated":false},"stderr":{"text":"err\n","truncated":false},"sandbox":{"mode":"danger-full-access","denied":false}}`; string(out.Value) != want {
		t.Errorf("value bytes %s\nwant        %s", out.Value, want)
	}
	if want := "out\n[stderr]\nerr\n[exit code: 3]"; out.Content[0].Text != want {
		t.Errorf("text %q, want %q", out.Content[0].Text, want)
	}
}

func TestWorkdirPerSession(t *testing.T) {
	wsA, wsB, def := t.TempDir(), t.TempDir(), t.TempDir()
	tool := newTool(t, Config{DefaultWorkdir: def}, Deps{})
	tests := []struct {
		name  string
		agent *pipeline.Agent
		want  string
	}{
		{"first session uses its cwd", agent(t, "A", wsA), wsA + "\n"},
		{"second session uses its own cwd", agent(t, "B", wsB), wsB + "\n"},
		{"agentless call falls back to the configured workdir", nil, def + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := run(t, tool, call(tt.agent, cmd("pwd"))); err != nil || got != tt.want {
				t.Errorf("got %q, %v", got, err)
			}
		})
	}
}

func TestBackgroundPreflightFailureSpawnsNothing(t *testing.T) {
	ws := t.TempDir()
	reg, _ := newJobs(t)
	p := provider(t, sandbox.Config{Platform: "plan9"}) // no backend at all: Confine refuses
	tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.WorkspaceWrite, ws), Confiner: p, Jobs: reg})
	_, err := run(t, tool, call(agent(t, "s", ws), cmd("touch "+ws+"/ran", "run_in_background", true)))
	if !pipeline.HasCode(err, sandbox.ErrorCode) {
		t.Errorf("err = %v", err)
	}
	if len(reg.List("s")) != 0 {
		t.Error("a job was registered for a call that could not be confined")
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(ws + "/ran"); err == nil {
		t.Error("ran unconfined")
	}
}

// cancellingApprover grants, but the caller cancels while it answers.
type cancellingApprover struct{ cancel context.CancelFunc }

func (c cancellingApprover) Request(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	c.cancel()
	return pipeline.AllowedOnce, nil
}

func TestCancellationAfterGrantStartsNothing(t *testing.T) {
	for _, background := range []bool{false, true} {
		t.Run(fmt.Sprintf("background=%v", background), func(t *testing.T) {
			ws := t.TempDir()
			reg, _ := newJobs(t)
			ctx, cancel := context.WithCancel(context.Background())
			tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, ws), Confiner: confinerFunc(func(context.Context, []string, sandbox.Policy) (sandbox.ConfinedArgv, error) {
				t.Error("confined after a cancelled grant")
				return sandbox.ConfinedArgv{}, context.Canceled
			}), Escalate: escalation.New(cancellingApprover{cancel}), Jobs: reg})
			_, err := runTool(t, tool, ctx, call(agent(t, "s", ws), cmd("touch "+ws+"/ran", "run_in_background", background, "sandbox_permissions", "danger-full-access", "justification", "why")))
			abortedBeforeStart(t, err, ws, reg)
		})
	}
}

func TestAgentlessEscalationIsRefused(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, ws), Confiner: confinerFunc(func(context.Context, []string, sandbox.Policy) (sandbox.ConfinedArgv, error) {
		t.Error("confined without approval")
		return sandbox.ConfinedArgv{}, nil
	}), Escalate: escalation.New(&approver{outcome: pipeline.AllowedOnce})})
	_, err := run(t, tool, call(nil, cmd("true", "sandbox_permissions", "workspace-write", "justification", "why")))
	if err == nil || err.Error() != `sandbox escalation to "workspace-write" requires approval, but the call has no agent to route it through` {
		t.Errorf("err = %v", err)
	}
}

// Through the real tool registry: a non-zero exit is a normal result, a
// start failure and an abort are tool errors with their codes.
func TestThroughThePipeline(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{}, Deps{})
	reg := pipelinetest.Registry(t, tool.definition())
	ag := agent(t, "s", ws)
	exec := func(args map[string]any, ctx context.Context) pipeline.Result {
		b, _ := json.Marshal(args)
		return reg.Execute(pipeline.NewCall("c", "bash", b, ag, ctx))
	}
	if res := exec(cmd("printf failing; exit 3"), nil); res.IsError || res.Text() != "failing\n[exit code: 3]" {
		t.Errorf("non-zero exit: %+v", res)
	}
	if res := exec(cmd("true", "workdir", "/nonexistent"), nil); !res.IsError || !strings.HasPrefix(res.Text(), "Error: ") {
		t.Errorf("start failure: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if res := exec(cmd("sleep 5"), ctx); !res.IsError || res.Text() != "Error: tool call aborted" {
		t.Errorf("abort: %+v", res)
	}
}

// TestBackgroundValueKeyOrder: the background value keeps upstream's key
// order (kind first), which a run_code program returning it whole shows.
func TestBackgroundValueKeyOrder(t *testing.T) {
	reg, _ := newJobs(t)
	tool := newTool(t, Config{}, Deps{Jobs: reg})
	out, err := runTool(t, tool, context.Background(), call(agent(t, "s", t.TempDir()), cmd("true", "run_in_background", true)))
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Value) != `{"kind":"background","jobId":"bash-1"}` {
		t.Errorf("value %s", out.Value)
	}
}
