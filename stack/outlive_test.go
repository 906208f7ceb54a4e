package stack_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/stack"
)

// detach is a command that leaves two processes behind: a detached daemon
// (setsid, then its parent exits) and a double fork that stays in the
// call's session, each `sleep <marker><n>`.
func detach(marker, n string) string {
	return "(setsid sleep " + marker + n + "1 </dev/null >/dev/null 2>&1 &); (sleep " + marker + n + "2 </dev/null >/dev/null 2>&1 &)"
}

// checkNothingLeft fails t when a process with marker in its command line
// still runs.
func checkNothingLeft(t *testing.T, marker, when string) {
	t.Helper()
	if left := sandboxtest.Running(marker); len(left) > 0 {
		t.Errorf("left running %s:\n%s", when, strings.Join(left, "\n"))
	}
}

// TestNothingOutlivesTheCallInTheStack: a bash call, an escalated
// danger-full-access call, and a run_code program (through its nested bash
// and through the Node child's own spawns, detached or not) leave nothing
// running once their result is out, checked with /proc, under the platform's
// chain (bwrap here: its PID namespace) and under Landlock alone (the
// executor's reaper); the escalated call's detached writer never writes
// after the call returned.
func TestNothingOutlivesTheCallInTheStack(t *testing.T) {
	for _, chain := range [][]string{nil, {sandbox.BackendLandlock}} {
		name := "platform chain"
		if chain != nil {
			name = "landlock only"
		}
		t.Run(name, func(t *testing.T) {
			launcher := ""
			if chain != nil {
				sandboxtest.RequireLandlock(t, 1)
				launcher = sandboxtest.Runner(t)
			}
			newStack := func(t *testing.T, toolsMode string) *stack.Stack {
				ws := sandboxtest.TempDir(t, "dshsim-stack-outlive-")
				log := sessiontest.New(t, "0b7c2a52-5a8e-4d8e-9a55-000000000003", ws)
				s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalAsk, ToolOptions: stack.ToolOptions{
					ToolsMode: toolsMode,
				},
					SandboxConfig: stack.SandboxConfig{
						SandboxChain: chain,
						LauncherPath: launcher,
					},
					Answer: func(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
						return pipeline.AllowedOnce, nil
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				sessiontest.StartTurn(t, log)
				return s
			}
			t.Run("bash", func(t *testing.T) {
				s := newStack(t, "")
				m := sandboxtest.Marker()
				if r := bash(t, s, "c1", detach(m, "1"), nil); r.IsError {
					t.Fatalf("%s", r.Text())
				}
				checkNothingLeft(t, m, "after a bash call")
			})
			t.Run("escalated", func(t *testing.T) {
				s := newStack(t, "")
				m := sandboxtest.Marker()
				late := filepath.Join(sandboxtest.TempDir(t, "dshsim-stack-late-"), "late")
				cmd := "(setsid sh -c 'sleep 1; echo late > " + late + "' </dev/null >/dev/null 2>&1 &); " + detach(m, "1")
				r := bash(t, s, "c1", cmd, map[string]any{"sandbox_permissions": "danger-full-access", "justification": "the test needs it"})
				if r.IsError {
					t.Fatalf("%s", r.Text())
				}
				checkNothingLeft(t, m, "after an escalated call")
				time.Sleep(1500 * time.Millisecond)
				if _, err := os.Stat(late); err == nil {
					t.Errorf("the escalated call's detached process wrote %s after the call returned", late)
				}
			})
			t.Run("run_code", func(t *testing.T) {
				s := newStack(t, stack.ToolsCode)
				m := sandboxtest.Marker()
				program := `
await tools.bash({command: "` + detach(m, "1") + `", description: "nested bash leaves processes"});
const cp = await import("node:child_process");
cp.spawn("sleep", ["` + m + `31"], {detached: true, stdio: "ignore"}).unref();
cp.spawn("sleep", ["` + m + `32"], {stdio: "ignore"}).unref();
cp.spawn("sh", ["-c", "` + detach(m, "4") + `"], {stdio: "ignore"});
return "started";`
				res := runCode(s, context.Background(), "call_1", program)
				if res.IsError {
					t.Fatalf("%s", res.Text())
				}
				checkNothingLeft(t, m, "after run_code returned")
			})
		})
	}
}

// TestRunCodeReportsItsSandbox: under Landlock (the default path, in this
// process), run_code's result carries
// its run's sandbox facts beside the value (the backend, what it cannot
// govern), and the settle event of its nested bash carries the nested
// run's; the program's value and text stay upstream's.
func TestRunCodeReportsItsSandbox(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	ws := sandboxtest.TempDir(t, "dshsim-stack-facts-")
	log := sessiontest.New(t, "0b7c2a52-5a8e-4d8e-9a55-000000000004", ws)
	s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalNever, ToolOptions: stack.ToolOptions{
		ToolsMode: stack.ToolsCode,
	},
		SandboxConfig: stack.SandboxConfig{
			SandboxChain: []string{sandbox.BackendLandlock},
			LauncherPath: sandboxtest.Runner(t),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sessiontest.StartTurn(t, log)
	res := runCode(s, context.Background(), "call_1", `const r = await tools.bash({command: "true", description: "nothing"}); return Object.keys(r.sandbox).join(",");`)
	if res.IsError || res.Text() != "mode,denied,enforcement" {
		t.Fatalf("result %q: want the nested value's upstream keys", res.Text())
	}
	d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	check := func(what string, f *sandbox.Facts) {
		if f == nil || f.Backend != inproc.Backend || strings.Join(f.Ungoverned, "|") != strings.Join(d.Ungoverned, "|") {
			t.Errorf("%s: facts %+v, want Landlock's with its Ungoverned list", what, f)
		}
	}
	check("run_code's result", sandbox.FactsOf(res.Sandbox))
	evs, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == session.KindCodeDispatch {
			var d struct{ Sandbox *sandbox.Facts }
			json.Unmarshal(e.Data, &d)
			check("the nested bash's settle event", d.Sandbox)
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d settle events, want 1", n)
	}
}
