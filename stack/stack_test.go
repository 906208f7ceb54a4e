package stack_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/cordis"
	"github.com/dshsim/dshsim/tools/jobs"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func newStack(t *testing.T, mode sandbox.Mode, approval string, answer stack.Answerer) (*stack.Stack, string, *session.Log) {
	t.Helper()
	return newStackWith(t, mode, approval, answer, nil, "")
}

func newStackWith(t *testing.T, mode sandbox.Mode, approval string, answer stack.Answerer, chain []string, launcher string) (*stack.Stack, string, *session.Log) {
	t.Helper()
	return newStackConfig(t, stack.Config{Mode: mode, Approval: approval, Answer: answer, SandboxConfig: stack.SandboxConfig{SandboxChain: chain, LauncherPath: launcher}})
}

func newStackConfig(t *testing.T, cfg stack.Config) (*stack.Stack, string, *session.Log) {
	t.Helper()
	s, ws, log := composed(t, cfg)
	sessiontest.StartTurn(t, log)
	return s, ws, log
}

func bash(t *testing.T, s *stack.Stack, id, command string, extra map[string]any) pipeline.Result {
	t.Helper()
	args := map[string]any{"command": command, "description": "test"}
	for k, v := range extra {
		args[k] = v
	}
	raw, _ := json.Marshal(args)
	return s.Execute(context.Background(), id, "bash", raw)
}

// TestWorkspaceWriteBashRunsUnderTheRealSandbox: a composed workspace-write
// stack writes inside the workspace, is denied outside it by the kernel
// sandbox (the platform chain; Landlock alone, in-process by default and
// through the runner when the configuration asks for it), and says so with
// the denial marker and the escalation hint.
func TestWorkspaceWriteBashRunsUnderTheRealSandbox(t *testing.T) {
	tests := []struct {
		name    string
		chain   []string
		runner  bool
		backend string // "" = bwrap or landlock-inproc
	}{
		{name: "platform chain", backend: ""},
		{name: "landlock only", chain: []string{"landlock"}, backend: inproc.Backend},
		{name: "landlock runner", chain: []string{"landlock"}, runner: true, backend: sandbox.BackendLandlock},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			launcher := ""
			if tc.chain != nil {
				sandboxtest.RequireLandlock(t, 1)
				launcher = sandboxtest.Runner(t)
			}
			s, ws, _ := newStackConfig(t, stack.Config{Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalAsk, Answer: func(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
				return pipeline.Rejected, nil
			}, SandboxConfig: stack.SandboxConfig{
				SandboxChain:   tc.chain,
				LauncherPath:   launcher,
				LandlockRunner: tc.runner,
			},
			})
			in := bash(t, s, "c1", "echo inside > inside.txt && cat inside.txt", nil)
			if in.IsError || in.Text() != "inside\n" {
				t.Fatalf("write inside the workspace: %+v", in)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "inside\n" {
				t.Fatalf("inside.txt = %q, %v", b, err)
			}
			outside := filepath.Join(sandboxtest.TempDir(t, "dsh-stack-test-"), "outside")
			out := bash(t, s, "c2", "echo outside > "+outside, nil)
			if _, err := os.Stat(outside); err == nil {
				os.Remove(outside)
				t.Fatalf("a workspace-write call wrote %s outside the workspace", outside)
			}
			for _, want := range []string{sandbox.DenialMarker(sandbox.WorkspaceWrite), sandbox.EscalationHint("command")} {
				if !strings.Contains(out.Text(), want) {
					t.Errorf("denied write result %q lacks %q", out.Text(), want)
				}
			}
			backend, _ := s.Backend()
			if tc.backend != "" && backend != tc.backend || tc.backend == "" && backend != "bwrap" && backend != inproc.Backend {
				t.Errorf("backend %q, want %q (bwrap or landlock-inproc when empty)", backend, tc.backend)
			}
			if f := sandbox.FactsOf(out.Sandbox); f == nil || f.Backend != backend || (f.Fallback == chain.RunnerConfigured) != tc.runner {
				t.Errorf("the result's facts %+v: want backend %q, the runner's fallback reason %v", f, backend, tc.runner)
			}
		})
	}
}

// TestAConfiguredRunnerThatDoesNotExist: a stack configured to run the
// Landlock runner (LandlockRunner) at a path that does not exist fails
// closed, as upstream's missing sandbox runner does: the foreground call is
// refused naming the spawn error, the background job settles killed before
// exit and its output starts with upstream's stderr line, "spawn failed:
// Error: spawn <runner path> ENOENT", before the runner-failure notice;
// neither command runs. Without LandlockRunner the in-process path confines
// the same calls and the missing runner is never consulted.
func TestAConfiguredRunnerThatDoesNotExist(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	missing := filepath.Join(t.TempDir(), ".dsh-missing-sandbox-runner")
	s, ws, _ := newStackConfig(t, stack.Config{Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalNever,
		SandboxConfig: stack.SandboxConfig{
			SandboxChain:   []string{sandbox.BackendLandlock},
			LauncherPath:   missing,
			LandlockRunner: true,
		},
	})
	fg, bg := filepath.Join(ws, "foreground-ran"), filepath.Join(ws, "background-ran")
	r := bash(t, s, "c1", "touch "+fg, nil)
	if !r.IsError || !strings.HasSuffix(r.Text(), "Runner failure: Error: spawn "+missing+" ENOENT") {
		t.Errorf("foreground result %q: want the refusal naming the spawn error", r.Text())
	}
	if r := bash(t, s, "c2", "touch "+bg, map[string]any{"run_in_background": true}); r.IsError || r.Text() != "started background job bash-1" {
		t.Fatalf("background start %q", r.Text())
	}
	out := s.Execute(context.Background(), "c3", "job_output", []byte(`{"job_id":"bash-1","wait":true,"timeout_ms":5000}`))
	want := "[stderr]\nspawn failed: Error: spawn " + missing + " ENOENT\n" + sandbox.RunnerFailedMarker(sandbox.WorkspaceWrite) + "\n[status: killed, killed before exit]"
	if out.IsError || out.Text() != want {
		t.Errorf("job output\n got %q\nwant %q", out.Text(), want)
	}
	for _, p := range []string{fg, bg} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: a command ran without its runner", p)
		}
	}

	own, ws2, _ := newStackConfig(t, stack.Config{Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalNever,
		SandboxConfig: stack.SandboxConfig{
			SandboxChain: []string{sandbox.BackendLandlock},
			LauncherPath: missing,
		},
	})
	if r := bash(t, own, "c1", "touch ran && echo ok", nil); r.IsError || r.Text() != "ok\n" {
		t.Errorf("in-process result %q", r.Text())
	} else if f := sandbox.FactsOf(r.Sandbox); f == nil || f.Backend != inproc.Backend {
		t.Errorf("in-process facts %+v", f)
	}
	if _, err := os.Stat(filepath.Join(ws2, "ran")); err != nil {
		t.Error(err)
	}
}

// TestRejectedEscalationRunsNothing: the approval is audited in the log and
// the command never runs.
func TestRejectedEscalationRunsNothing(t *testing.T) {
	asked := 0
	s, ws, log := newStack(t, sandbox.WorkspaceWrite, stack.ApprovalAsk, func(_ context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
		asked++
		return pipeline.Rejected, nil
	})
	marker := filepath.Join(ws, "ran.txt")
	r := bash(t, s, "c1", "touch "+marker, map[string]any{"sandbox_permissions": "danger-full-access", "justification": "test"})
	if !r.IsError || r.Text() != `Error: the user rejected escalating this command to "danger-full-access"` {
		t.Fatalf("result %+v", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the rejected command ran")
	}
	events, _ := log.Events()
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	if asked != 1 || strings.Join(types, ",") != "turn/start,approval/asked,approval/decided" {
		t.Errorf("asked %d, log %v", asked, types)
	}
}

// TestEscalationAnswererSeesTheCall: the approval request of an escalation
// carries the call to the answerer (the person asked): the tool, its
// arguments (bash's command, write's path and content), the mode asked for,
// the standing mode and the justification, and Subject says it in a line.
// Upstream's request names only the mode and the justification.
func TestEscalationAnswererSeesTheCall(t *testing.T) {
	var seen []pipeline.ApprovalRequest
	s, ws, _ := newStack(t, sandbox.WorkspaceWrite, stack.ApprovalAsk, func(_ context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
		seen = append(seen, req)
		return pipeline.Rejected, nil
	})
	outside := filepath.Join(sandboxtest.TempDir(t, "dsh-stack-test-"), "outside.txt")
	esc := map[string]any{"sandbox_permissions": "danger-full-access", "justification": "the user asked for it"}
	bash(t, s, "c1", "echo hi > "+outside, esc)
	raw, _ := json.Marshal(map[string]any{"file_path": outside, "content": "x", "sandbox_permissions": "danger-full-access", "justification": "the user asked for it"})
	s.Execute(context.Background(), "c2", "write", raw)
	if len(seen) != 2 {
		t.Fatalf("asked %d times, want 2 (bash, write)", len(seen))
	}
	for i, want := range []struct{ tool, arg, value string }{{"bash", "command", "echo hi > " + outside}, {"write", "file_path", outside}} {
		e := seen[i].Escalation
		if e == nil {
			t.Fatalf("%s: the request carries no call (reason %q)", want.tool, seen[i].Reason)
		}
		var args map[string]any
		if err := json.Unmarshal(e.Args, &args); err != nil || args[want.arg] != want.value {
			t.Errorf("%s: arguments %s (%v), want %s %q", want.tool, e.Args, err, want.arg, want.value)
		}
		if e.Tool != want.tool || e.Mode != "danger-full-access" || e.Standing != "workspace-write" || e.Justification != "the user asked for it" {
			t.Errorf("%s: %+v", want.tool, *e)
		}
		if sub := seen[i].Subject(); !strings.Contains(sub, want.tool+" {") || !strings.Contains(sub, outside) || !strings.HasSuffix(sub, "with sandbox danger-full-access instead of workspace-write: the user asked for it") {
			t.Errorf("%s: Subject %q", want.tool, sub)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "outside.txt")); err == nil {
		t.Error("a rejected call wrote")
	}
}

func TestNewFailsClosed(t *testing.T) {
	log := sessiontest.New(t, "x", "/tmp")
	tests := []struct {
		name string
		cfg  stack.Config
		want string
	}{
		{name: "ask without an answerer", cfg: stack.Config{Workspace: "/tmp", Log: log, Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalAsk}, want: "approval policy ask needs an answerer"},
		{name: "relative workspace", cfg: stack.Config{Workspace: "ws", Log: log, Mode: sandbox.ReadOnly, Approval: stack.ApprovalNever}, want: `workspace "ws" must be an absolute path`},
		{name: "unknown mode", cfg: stack.Config{Workspace: "/tmp", Log: log, Mode: "full", Approval: stack.ApprovalNever}, want: `unknown sandbox mode "full"`},
		{name: "unknown approval policy", cfg: stack.Config{Workspace: "/tmp", Log: log, Mode: sandbox.ReadOnly, Approval: "sometimes"}, want: `unknown approval policy "sometimes"`},
		{name: "no log", cfg: stack.Config{Workspace: "/tmp", Mode: sandbox.ReadOnly, Approval: stack.ApprovalNever}, want: "a session log is required"},
		{name: "spill without a root", cfg: stack.Config{Workspace: "/tmp", Log: log, Mode: sandbox.ReadOnly, Approval: stack.ApprovalNever, Spill: stack.SpillConfig{MaxInlineBytes: 800}}, want: "spill root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := stack.New(tc.cfg)
			if s != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want an error containing %q", s, err, tc.want)
			}
		})
	}
}

func TestComposedTools(t *testing.T) {
	s, _, _ := newStack(t, sandbox.DangerFullAccess, stack.ApprovalNever, nil)
	got := strings.Join(s.Tools(), ",")
	for _, want := range []string{"bash", "read", "write", "edit"} {
		if !strings.Contains(","+got+",", ","+want+",") {
			t.Errorf("tools %s lack %s", got, want)
		}
	}
}

// composed builds a stack from cfg on a fresh workspace and session log.
func composed(t *testing.T, cfg stack.Config) (*stack.Stack, string, *session.Log) {
	t.Helper()
	ws := t.TempDir()
	log := sessiontest.New(t, "0b7c2a52-5a8e-4d8e-9a55-000000000001", ws)
	cfg.Workspace, cfg.Log = ws, log
	s, err := stack.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ws, log
}

// newComposed builds a danger-full-access stack with cfg's job and tool knobs.
func newComposed(t *testing.T, cfg stack.Config) *stack.Stack {
	t.Helper()
	cfg.Mode, cfg.Approval = sandbox.DangerFullAccess, stack.ApprovalNever
	s, _, _ := composed(t, cfg)
	return s
}

// TestComposition: the tools composed, their order and which of them may
// run in a parallel pool; session query only when asked for.
func TestComposition(t *testing.T) {
	plain := newComposed(t, stack.Config{})
	if got := strings.Join(plain.Tools(), ","); got != "bash,job_output,job_kill,job_list,read,write,edit" {
		t.Errorf("tools %s", got)
	}
	sq := newComposed(t, stack.Config{ExtraTools: stack.ExtraTools{SessionQuery: &stack.SessionQueryConfig{}}})
	var safe []string
	for _, d := range sq.Definitions() {
		if d.ConcurrencySafe {
			safe = append(safe, d.Name)
		}
	}
	if got := strings.Join(sq.Tools(), ","); got != "bash,job_output,job_kill,job_list,read,write,edit,session_event_read,session_event_search" {
		t.Errorf("tools with session query %s", got)
	}
	if strings.Join(safe, ",") != "read,session_event_read" {
		t.Errorf("concurrency-safe tools %v", safe)
	}
	// Every area at once, in compose's order: bash and the job tools,
	// run_code (composed without a runtime when node is missing), the file
	// tools, session query.
	all := newComposed(t, stack.Config{ExtraTools: stack.ExtraTools{SessionQuery: &stack.SessionQueryConfig{}}, ToolOptions: stack.ToolOptions{ToolsMode: stack.ToolsBoth}})
	if got := strings.Join(all.Tools(), ","); got != "bash,job_output,job_kill,job_list,run_code,read,write,edit,session_event_read,session_event_search" {
		t.Errorf("tools of every area %s", got)
	}
}

// TestJobKnobs: the admission bound and the notice hook reach the registry.
func TestJobKnobs(t *testing.T) {
	notices := make(chan jobs.Notice, 4)
	s := newComposed(t, stack.Config{ToolOptions: stack.ToolOptions{Jobs: stack.JobsConfig{MaxConcurrentPerOwner: 1, Notify: func(n jobs.Notice) { notices <- n }}}})
	if r := bash(t, s, "c1", "sleep 0.2", map[string]any{"run_in_background": true}); r.Text() != "started background job bash-1" {
		t.Fatalf("first start: %q", r.Text())
	}
	if r := bash(t, s, "c2", "true", map[string]any{"run_in_background": true}); r.Text() != "Error: background job limit reached for this owner (limit: 1); use job_kill to stop an unneeded job, wait for it to finish, then retry" {
		t.Errorf("second start: %q", r.Text())
	}
	select {
	case n := <-notices:
		if n.JobID != "bash-1" || n.Status != "completed" {
			t.Errorf("notice %+v", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notice reached Jobs.Notify")
	}
	ws := t.TempDir()
	log := sessiontest.New(t, "x", ws)
	if _, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever, ToolOptions: stack.ToolOptions{Jobs: stack.JobsConfig{MaxConcurrentPerOwner: -1}}}); err == nil {
		t.Error("a negative admission bound was accepted")
	}
}

// TestRunningJobPIDs: the session leader of a running background job is
// listed; a foreground call and a job that settled are not.
func TestRunningJobPIDs(t *testing.T) {
	s := newComposed(t, stack.Config{})
	if r := bash(t, s, "c1", "sleep 30", map[string]any{"run_in_background": true}); r.Text() != "started background job bash-1" {
		t.Fatalf("start: %q", r.Text())
	}
	bash(t, s, "c2", "true", nil)
	pids := s.RunningJobPIDs()
	if len(pids) != 1 {
		t.Fatalf("running job pids %v, want the one of bash-1", pids)
	}
	if sid, err := unix.Getsid(pids[0]); err != nil || sid != pids[0] {
		t.Errorf("pid %d: session %d (%v), want a session leader", pids[0], sid, err)
	}
	kill, _ := json.Marshal(map[string]any{"job_id": "bash-1", "reason": "test"})
	s.Execute(context.Background(), "c3", "job_kill", kill)
	wait, _ := json.Marshal(map[string]any{"job_id": "bash-1", "wait": true, "timeout_ms": 20000})
	s.Execute(context.Background(), "c4", "job_output", wait)
	if pids := s.RunningJobPIDs(); len(pids) != 0 {
		t.Errorf("after the job settled: %v", pids)
	}
}

// promptSections returns the names of the stack's prompt sections in order,
// joined by commas, and each section's text by name.
func promptSections(t *testing.T, s *stack.Stack) (names string, text map[string]string) {
	t.Helper()
	secs, err := s.PromptSections()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	text = map[string]string{}
	for _, p := range secs {
		out = append(out, p.Name)
		text[p.Name] = p.Text
	}
	return strings.Join(out, ","), text
}

// TestPromptSections: the composed tools' sections, by upstream's order.
func TestPromptSections(t *testing.T) {
	names := func(s *stack.Stack) string {
		n, _ := promptSections(t, s)
		return n
	}
	if got := names(newComposed(t, stack.Config{})); got != "tool:read,tool:write,tool:edit,tool:bash,tool:jobs" {
		t.Errorf("sections %s", got)
	}
	if got := names(newComposed(t, stack.Config{ExtraTools: stack.ExtraTools{SessionQuery: &stack.SessionQueryConfig{}}})); got != "tool:read,tool:write,tool:edit,tool:bash,tool:jobs,tool:session-query" {
		t.Errorf("sections with session query %s", got)
	}
	// the advanced overlay's: tool:cordis shares order 115 with
	// tool:workflow and follows it, as upstream registers them
	sub := stack.DefaultSubagents()
	sub.Loops, sub.SessionsDir = &scripted{}, t.TempDir()
	got, text := promptSections(t, newComposed(t, stack.Config{ExtraTools: stack.ExtraTools{Cordis: true}, Subagents: &sub}))
	if got != "tool:read,tool:write,tool:edit,tool:bash,tool:jobs,tool:workflow,tool:cordis,tool:subagent" {
		t.Errorf("sections with cordis %s", got)
	}
	if text["tool:cordis"] != cordis.PromptSection {
		t.Error("tool:cordis is not cordis.PromptSection")
	}
}
