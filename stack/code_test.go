package stack_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/code"
)

// newCodeStack composes a stack in toolsMode; its workspace is outside /tmp
// (which workspace-write grants under Landlock and replaces under bwrap).
func newCodeStack(t *testing.T, toolsMode string, mode sandbox.Mode, answer stack.Answerer, guards ...pipeline.Guard) (*stack.Stack, string, *session.Log) {
	t.Helper()
	ws := sandboxtest.TempDir(t, "dshsim-stack-code-")
	log := sessiontest.New(t, "0b7c2a52-5a8e-4d8e-9a55-000000000002", ws)
	approval := stack.ApprovalNever
	if answer != nil {
		approval = stack.ApprovalAsk
	}
	s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: mode, Approval: approval, Answer: answer, ToolOptions: stack.ToolOptions{ToolsMode: toolsMode}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, g := range guards {
		if _, err := s.In(nil).AddGuard(g); err != nil {
			t.Fatal(err)
		}
	}
	sessiontest.StartTurn(t, log)
	return s, ws, log
}

func runCode(s *stack.Stack, ctx context.Context, id, program string) pipeline.Result {
	raw, _ := json.Marshal(map[string]string{"code": program, "description": "test program"})
	return s.Execute(ctx, id, code.Name, raw)
}

func names(tools []pipeline.Tool) string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Name)
	}
	return strings.Join(n, ",")
}

func TestToolsModes(t *testing.T) {
	for _, c := range []struct {
		mode, wire, sections string
	}{
		{"", "bash,edit,job_kill,job_list,job_output,read,write", "tool:read,tool:write,tool:edit,tool:bash,tool:jobs"},
		{stack.ToolsNative, "bash,edit,job_kill,job_list,job_output,read,write", "tool:read,tool:write,tool:edit,tool:bash,tool:jobs"},
		{stack.ToolsCode, "run_code", "tools:code-only,tool:read,tool:write,tool:edit,tool:bash,tool:jobs,tools:sdk"},
		{stack.ToolsBoth, "bash,edit,job_kill,job_list,job_output,read,run_code,write", "tool:read,tool:write,tool:edit,tool:bash,tool:jobs,tools:sdk"},
	} {
		t.Run("mode "+c.mode, func(t *testing.T) {
			s, _, _ := newCodeStack(t, c.mode, sandbox.DangerFullAccess, nil)
			if got := names(s.WireTools()); got != c.wire {
				t.Errorf("wire tools %s, want %s", got, c.wire)
			}
			got, text := promptSections(t, s)
			if got != c.sections {
				t.Errorf("sections %s, want %s", got, c.sections)
			}
			if sdkText, ok := text["tools:sdk"]; ok {
				for _, want := range []string{"  bash: {", "  read: {", "interface ToolOutputMap {\n  bash: {\n    kind: \"background\";"} {
					if !strings.Contains(sdkText, want) {
						t.Errorf("the SDK lacks %q", want)
					}
				}
				if strings.Contains(sdkText, "run_code:") {
					t.Error("the SDK declares run_code")
				}
			}
		})
	}
	if _, err := stack.New(stack.Config{Workspace: t.TempDir(), Log: nil, Mode: sandbox.ReadOnly, Approval: stack.ApprovalNever, ToolOptions: stack.ToolOptions{ToolsMode: "ptc"}}); err == nil || !strings.Contains(err.Error(), `stack: unknown tools mode "ptc" (want native, code or both)`) {
		t.Errorf("bad tools mode: %v", err)
	}
}

func TestCodeModeCollapsesDirectCalls(t *testing.T) {
	s, _, _ := newCodeStack(t, stack.ToolsCode, sandbox.DangerFullAccess, nil)
	res := bash(t, s, "c1", "echo hi", nil)
	if res.Text() != "Error: unknown tool \"bash\": only `run_code` is callable directly — call `bash` from inside a `run_code` program instead" ||
		res.Error.Info == nil || res.Error.Info.Code != "UNKNOWN_TOOL" || res.Error.Info.Name != "ToolNotFoundError" {
		t.Errorf("%+v %+v", res, res.Error)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := s.Execute(ctx, "c2", "read", json.RawMessage(`{"file_path":"x"}`)); res.Text() != "Error: tool call aborted before dispatch" {
		t.Errorf("pre-aborted: %q", res.Text())
	}
	if res := runCode(s, context.Background(), "c3", `return (await tools.bash({command: "echo nested", description: "d"})).stdout.text;`); res.IsError || res.Text() != "nested\n" {
		t.Errorf("a nested bash: %q", res.Text())
	}
	both, _, _ := newCodeStack(t, stack.ToolsBoth, sandbox.DangerFullAccess, nil)
	if res := bash(t, both, "c4", "echo direct", nil); res.IsError || res.Text() != "direct\n" {
		t.Errorf("both mode runs a direct call: %q", res.Text())
	}
}

// TestProgramsUseTheWholeStack: under workspace-write with the real sandbox,
// a program calls bash and read, a guard denies a nested call, a nested
// escalation asks the user with the sub-call id, and the program's own file
// writes are confined.
func TestProgramsUseTheWholeStack(t *testing.T) {
	var asked []string
	answer := func(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
		asked = append(asked, req.CallID)
		return pipeline.Rejected, nil
	}
	guard := func(ctx context.Context, call *pipeline.Call) (string, bool) {
		return "writing .env files is not allowed (constructed guard)", call.Name() == "write" && strings.Contains(string(call.Args()), ".env")
	}
	s, _, log := newCodeStack(t, stack.ToolsCode, sandbox.WorkspaceWrite, answer, guard)
	outside := filepath.Join(sandboxtest.TempDir(t, "dshsim-stack-outside-"), "outside.txt")
	program := `
const made = await tools.bash({command: "printf 'one\\ntwo\\n' > notes.txt", description: "write notes"});
const read = await tools.read({file_path: "notes.txt"});
const out: string[] = [String(made.exitCode), read.lines.map(l => l.text).join("+")];
try { await tools.write({file_path: ".env", content: "X=1"}); } catch (e) { out.push(e.message); }
const esc = await tools.bash({command: "echo x > ` + outside + `", description: "write outside"});
out.push(String(esc.sandbox?.denied));
try { await tools.bash({command: "echo x > ` + outside + `", description: "write outside", sandbox_permissions: "danger-full-access", justification: "the test needs it"}); } catch (e) { out.push(e.message); }
const fs = await import("node:fs");
try { fs.writeFileSync("` + outside + `", "x"); out.push("wrote outside"); } catch (e) { out.push(e.code); }
return out;`
	res := runCode(s, context.Background(), "call_1", program)
	if res.IsError {
		t.Fatalf("%s", res.Text())
	}
	var got []string
	if err := json.Unmarshal([]byte(res.Text()), &got); err != nil {
		t.Fatalf("%q: %v", res.Text(), err)
	}
	want := []string{"0", "one+two", "writing .env files is not allowed (constructed guard)", "true", "the user rejected the sandbox escalation"}
	if len(got) != 6 || strings.Join(got[:4], "|") != strings.Join(want[:4], "|") || !strings.HasPrefix(got[4], "the user rejected") || (got[5] != "EACCES" && got[5] != "EROFS") {
		t.Errorf("program output %q", got)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a file outside the workspace was written")
	}
	if strings.Join(asked, ",") != "call_1:code:5" {
		t.Errorf("asked for %v, want the fifth nested call", asked)
	}
	evs, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	starts, settles := 0, 0
	for _, e := range evs {
		switch e.Type {
		case session.KindCodeDispatchStart:
			starts++
		case session.KindCodeDispatch:
			settles++
		}
	}
	if starts != 5 || settles != 5 {
		t.Errorf("%d starts, %d settles, want 5 each", starts, settles)
	}
}

// TestCancellingRunCodeLeavesNothingRunning cancels the outer call while a
// nested bash command runs and checks from outside that neither the Node
// child nor the command is left. The processes are found by their working
// directory: under bwrap's PID namespace the pids they see are not the
// host's.
func TestCancellingRunCodeLeavesNothingRunning(t *testing.T) {
	s, ws, _ := newCodeStack(t, stack.ToolsCode, sandbox.WorkspaceWrite, nil)
	ctx, cancel := context.WithCancel(context.Background())
	found := make(chan []int, 1)
	go func() {
		defer cancel()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(ws, "bash.pid")); err == nil {
				found <- sandboxtest.InDir(ws)
				return
			}
		}
		found <- nil
	}()
	res := runCode(s, ctx, "k", `await tools.bash({command: "sleep 300 & echo $! > sleep.pid; echo $$ > bash.pid; wait", description: "wait"});`)
	if !res.IsError || !strings.HasPrefix(res.Text(), "Error: code run failed (abort): ") {
		t.Errorf("result %q", res.Text())
	}
	pids := <-found
	// node, bash and sleep at least (a sandbox's own processes besides)
	if len(pids) < 3 {
		t.Fatalf("found %d processes in the workspace while the command ran (%v), want node, bash and sleep at least", len(pids), pids)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range pids {
		for procfs.Alive(p) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if procfs.Alive(p) {
			syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("process %d is still running after the cancelled run_code returned", p)
		}
	}
}

// TestRestrictionsFilterTheProgramsTools: a deny on the agent's scope hides
// the tool from the SDK, from the program's bindings and from the wire list,
// never run_code.
func TestRestrictionsFilterTheProgramsTools(t *testing.T) {
	s, _, _ := newCodeStack(t, stack.ToolsBoth, sandbox.DangerFullAccess, nil)
	if _, err := s.In(s.Agent().Scope()).Restrict(pipeline.Filter{Deny: []string{"write"}}); err != nil {
		t.Fatal(err)
	}
	if got := names(s.WireTools()); got != "bash,edit,job_kill,job_list,job_output,read,run_code" {
		t.Errorf("wire tools %s", got)
	}
	if _, text := promptSections(t, s); strings.Contains(text["tools:sdk"], "  write: {") || !strings.Contains(text["tools:sdk"], "  edit: {") {
		t.Error("the SDK still declares the denied write (or lost edit)")
	}
	if res := runCode(s, context.Background(), "r1", `return [typeof tools.write, typeof tools.edit];`); res.Text() != "[\n  \"undefined\",\n  \"function\"\n]" {
		t.Errorf("bindings: %q", res.Text())
	}
}
