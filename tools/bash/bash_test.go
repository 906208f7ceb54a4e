package bash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/outfile"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// agent returns an agent whose session log has cwd ws.
func agent(t *testing.T, id, ws string) *pipeline.Agent {
	t.Helper()
	return &pipeline.Agent{ID: "agent-" + id, Session: sessiontest.New(t, id, ws)}
}

func call(ag *pipeline.Agent, args map[string]any) *pipeline.Call {
	b, _ := json.Marshal(args)
	return pipeline.NewCall("call-1", Name, b, ag, nil)
}

func cmd(c string, extra ...any) map[string]any {
	m := map[string]any{"command": c, "description": "test command"}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

// run runs the body as the pipeline does: after the argument check.
// callDeadline bounds a test's call, above the 60 s foreground timeout: a
// call that a broken timeout or abort leaves running (a sleep 300, a wait
// for a member that ignores SIGTERM) fails its test.
const callDeadline = 90 * time.Second

// runTool is tool.Run, failing t when the call has not returned within
// callDeadline.
func runTool(t *testing.T, tool *Tool, ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
	t.Helper()
	var out pipeline.Output
	var err error
	waittest.Within(t, callDeadline, "the bash call to return", func() { out, err = tool.Run(ctx, c) })
	return out, err
}

func run(t *testing.T, tool *Tool, c *pipeline.Call) (string, error) {
	t.Helper()
	if err := pipeline.CheckArgs(tool.definition(), c); err != nil {
		return "", err
	}
	out, err := runTool(t, tool, context.Background(), c)
	if err != nil {
		return "", err
	}
	if len(out.Content) != 1 {
		t.Fatalf("content = %+v", out.Content)
	}
	return out.Content[0].Text, nil
}

func fixedPolicy(mode sandbox.Mode, ws string) func(*pipeline.Call) (sandbox.Policy, error) {
	return func(c *pipeline.Call) (sandbox.Policy, error) {
		return sandbox.Policy{Mode: mode, WorkspaceRoot: ws, SessionID: c.SessionID()}, nil
	}
}

func newTool(t *testing.T, cfg Config, deps Deps) *Tool {
	t.Helper()
	tool, err := build(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tool.Close() })
	return tool
}

func no() *bool { b := false; return &b }

func TestArgumentValidation(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.WorkspaceWrite, ws), Confiner: confinerFunc(func(context.Context, []string, sandbox.Policy) (sandbox.ConfinedArgv, error) {
		t.Error("validation failure reached the provider")
		return sandbox.ConfinedArgv{}, errors.New("unreachable")
	})})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		// the schema check first (ToolArgsError/INVALID_ARGS, upstream's defineTool)
		{"missing command", map[string]any{"description": "d"}, `invalid arguments: missing required property "command"`},
		{"non-string command", map[string]any{"command": 7, "description": "d"}, `invalid arguments: "command" must be a string`},
		{"missing description", map[string]any{"command": "true"}, `invalid arguments: missing required property "description"`},
		{"string timeout", cmd("true", "timeoutMs", "soon"), `invalid arguments: "timeoutMs" must be a number`},
		{"null workdir", cmd("true", "workdir", nil), `invalid arguments: "workdir" must be a string`},
		{"all at once", map[string]any{"timeoutMs": true, "run_in_background": 1}, `invalid arguments: missing required property "command"; missing required property "description"; "timeoutMs" must be a number; "run_in_background" must be a boolean`},
		{"out-of-enum permissions", cmd("true", "sandbox_permissions", "root", "justification", "j"), `invalid arguments: "sandbox_permissions" must be one of ["workspace-write","danger-full-access"]`},
		// then the tool's own checks (validateBashArgs), plain errors
		{"blank command", map[string]any{"command": "  ", "description": "d"}, "invalid command: expected a non-empty string"},
		{"empty description", map[string]any{"command": "true", "description": ""}, "invalid description: expected a non-empty string"},
		{"blank description", map[string]any{"command": "true", "description": " \n"}, "invalid description: expected a non-empty string"},
		{"zero timeout", cmd("true", "timeoutMs", 0), "invalid timeoutMs: expected a positive number, got 0"},
		{"negative timeout", cmd("true", "timeoutMs", -5), "invalid timeoutMs: expected a positive number, got -5"},
		// JSON.stringify of the number, not the spelling sent
		{"negative timeout spelt with a fraction", cmd("true", "timeoutMs", json.RawMessage("-5.0")), "invalid timeoutMs: expected a positive number, got -5"},
		{"zero timeout spelt with an exponent", cmd("true", "timeoutMs", json.RawMessage("0e5")), "invalid timeoutMs: expected a positive number, got 0"},
		{"small negative timeout", cmd("true", "timeoutMs", json.RawMessage("-0.0000001")), "invalid timeoutMs: expected a positive number, got -1e-7"},
		{"timeout past float64's range", cmd("true", "timeoutMs", json.RawMessage("1e999")), `invalid arguments: "timeoutMs" must be a finite JSON number`},
		{"permissions without justification", cmd("true", "sandbox_permissions", "danger-full-access"), escalation.ErrPermissionsWithoutJustification.Error()},
		{"justification without permissions", cmd("true", "justification", "because"), escalation.ErrJustificationWithoutPermissions.Error()},
		{"blank justification with permissions", cmd("true", "sandbox_permissions", "danger-full-access", "justification", "  "), escalation.ErrBlankJustification.Error()},
		{"a narrower target is outside the schema's enum", cmd("true", "sandbox_permissions", "read-only", "justification", "why"), `invalid arguments: "sandbox_permissions" must be one of ["workspace-write","danger-full-access"]`},
		{"escalation without approval service", cmd("true", "sandbox_permissions", "danger-full-access", "justification", "why"), `sandbox escalation to "danger-full-access" requires approval, but no approval service is composed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, tool, call(agent(t, "s", ws), tt.args))
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			if coded := pipeline.HasCode(err, pipeline.CodeInvalidArgs); coded != strings.HasPrefix(tt.want, "invalid arguments: ") {
				t.Errorf("INVALID_ARGS code = %v for %q", coded, tt.want)
			}
		})
	}
}

// TestBodyRunWithoutTheSchemaCheck: a body run directly, without the
// pipeline's argument check, refuses arguments of the wrong type with the
// schema check's own error (the tool checks no type itself), and runs
// nothing.
func TestBodyRunWithoutTheSchemaCheck(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.WorkspaceWrite, ws), Confiner: confinerFunc(func(context.Context, []string, sandbox.Policy) (sandbox.ConfinedArgv, error) {
		t.Error("a call with arguments of the wrong type reached the provider")
		return sandbox.ConfinedArgv{}, errors.New("unreachable")
	})})
	for _, raw := range []string{
		`{"description":"d"}`,
		`{"command":7,"description":"d"}`,
		`{"command":"true","description":"d","timeoutMs":"soon"}`,
		`{"command":"true","description":"d","timeoutMs":1e999}`,
		`{"command":"true","description":"d","workdir":null}`,
		`{"command":"true","description":"d","run_in_background":1}`,
		`{"command":"true","description":"d","sandbox_permissions":5,"justification":"j"}`,
		`["true"]`,
	} {
		c := pipeline.NewCall("call-1", Name, json.RawMessage(raw), agent(t, "s", ws), nil)
		want := pipeline.CheckArgs(tool.definition(), c)
		if want == nil {
			t.Fatalf("%s: the schema check passes it; the case proves nothing", raw)
		}
		_, err := runTool(t, tool, context.Background(), c)
		if err == nil || err.Error() != want.Error() || !pipeline.HasCode(err, pipeline.CodeInvalidArgs) {
			t.Errorf("%s: err = %v, want the schema check's %q", raw, err, want)
		}
	}
}

// TestUndeclaredArguments: with background execution disabled and no
// confining executor, run_in_background and the escalation fields are not
// declared, so the schema check lets any value through: only a literal true
// asks for the background (upstream's run_in_background === true), and an
// escalation field that is not a string is refused by the tool.
func TestUndeclaredArguments(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{EnableRunInBackground: no()}, Deps{})
	for _, tc := range []struct {
		args map[string]any
		out  string
		err  string
	}{
		{args: cmd("echo hi", "run_in_background", "yes"), out: "hi\n"},
		{args: cmd("echo hi", "run_in_background", 1), out: "hi\n"},
		{args: cmd("echo hi", "run_in_background", true), err: ErrBackgroundDisabled.Error()},
		{args: cmd("true", "sandbox_permissions", 5, "justification", "j"), err: "invalid sandbox_permissions: expected a string, got 5"},
		{args: cmd("true", "sandbox_permissions", "danger-full-access", "justification", []int{1, 2}), err: "invalid justification: expected a string, got [1,2]"},
	} {
		out, err := run(t, tool, call(agent(t, "s", ws), tc.args))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: err = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(out, tc.out) {
			t.Errorf("%v: %q, %v; want a foreground run printing %q", tc.args, out, err, tc.out)
		}
	}
}

// TestTimeoutIsTheModelsNumberCapped: a requested timeout is the model's
// number as given, fractions of a millisecond included (upstream reports
// "[timed out after 0.5ms]"), capped at maxTimeoutMs (a number past
// int64's milliseconds is the cap, not an overflowed deadline); the timer
// waits at least a millisecond, as Node's setTimeout does.
func TestTimeoutIsTheModelsNumberCapped(t *testing.T) {
	tool := newTool(t, Config{MaxTimeoutMs: 5000}, Deps{})
	for _, tc := range []struct {
		req   *float64
		want  float64
		delay time.Duration
	}{
		{nil, 5000, 5 * time.Second}, {ptr(1e19), 5000, 5 * time.Second}, {ptr(1e300), 5000, 5 * time.Second},
		{ptr(4999.2), 4999.2, 4999200 * time.Microsecond}, {ptr(1.5), 1.5, 1500 * time.Microsecond}, {ptr(5000.0), 5000, 5 * time.Second},
		{ptr(0.5), 0.5, time.Millisecond}, {ptr(1e-9), 1e-9, time.Millisecond}, {ptr(1.0), 1, time.Millisecond},
	} {
		got := tool.timeout(args{TimeoutMs: tc.req})
		req := "none"
		if tc.req != nil {
			req = fmt.Sprint(*tc.req)
		}
		if got != tc.want {
			t.Errorf("timeout for a requested %s = %v, want %v", req, got, tc.want)
		}
		if d := timerDelay(got); d != tc.delay {
			t.Errorf("timer for a requested %s waits %s, want %s", req, d, tc.delay)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestCompositionErrors(t *testing.T) {
	ws := t.TempDir()
	t.Run("confining executor without policy resolver fails construction", func(t *testing.T) {
		_, err := build(Config{}, Deps{Confiner: nopConfiner})
		if err == nil || err.Error() != "tool-bash: the mounted bash executor confines but ctx.sandboxPolicy is missing" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("escalation with a non-confining executor is refused", func(t *testing.T) {
		tool := newTool(t, Config{}, Deps{})
		_, err := run(t, tool, call(agent(t, "s", ws), cmd("true", "sandbox_permissions", "workspace-write", "justification", "why")))
		if err == nil || err.Error() != "sandbox_permissions is not available in this composition (no sandboxing executor to escalate)" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("confined standing mode without provider fails closed", func(t *testing.T) {
		marker := filepath.Join(ws, "ran")
		tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, ws)})
		_, err := run(t, tool, call(agent(t, "s", ws), cmd("touch "+marker)))
		if !pipeline.HasCode(err, sandbox.ErrorCode) {
			t.Errorf("err = %v", err)
		}
		if _, serr := os.Stat(marker); serr == nil {
			t.Error("the command ran unconfined")
		}
	})
	t.Run("background disabled", func(t *testing.T) {
		tool := newTool(t, Config{EnableRunInBackground: no()}, Deps{Jobs: jobs.NewRegistry(jobs.Options{})})
		_, err := run(t, tool, call(agent(t, "s", ws), cmd("true", "run_in_background", true)))
		if err == nil || err.Error() != "run_in_background is disabled for this deployment (enableRunInBackground: false)" {
			t.Errorf("err = %v", err)
		}
		if strings.Contains(string(tool.definition().Parameters), "run_in_background") {
			t.Error("schema advertises run_in_background")
		}
	})
	t.Run("background without job registry", func(t *testing.T) {
		tool := newTool(t, Config{}, Deps{})
		_, err := run(t, tool, call(agent(t, "s", ws), cmd("true", "run_in_background", true)))
		if err == nil || err.Error() != "background jobs unavailable: load @deepseek-ai/dsh-jobs and @deepseek-ai/dsh-tool-jobs" {
			t.Errorf("err = %v", err)
		}
	})
}

func TestForegroundRendering(t *testing.T) {
	ws := t.TempDir()
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	other := t.TempDir()
	tests := []struct {
		name string
		cfg  Config
		args map[string]any
		want string
	}{
		{"stdout", Config{}, cmd("echo hello"), "hello\n"},
		{"no output", Config{}, cmd("true"), "(no output)"},
		{"stderr section", Config{}, cmd("echo out; echo err >&2"), "out\n[stderr]\nerr\n"},
		{"non-zero exit is a marker not an error", Config{}, cmd("printf failing; exit 3"), "failing\n[exit code: 3]"},
		{"killed by own signal", Config{}, cmd("kill -KILL $$"), "(no output)\n[killed by signal: SIGKILL]"},
		{"workdir defaults to session cwd", Config{}, cmd("pwd"), ws + "\n"},
		{"relative workdir joins the root", Config{}, cmd("pwd", "workdir", "sub"), ws + "/sub\n"},
		{"absolute workdir kept", Config{}, cmd("pwd", "workdir", other), other + "\n"},
		{"pager environment is fixed", Config{Env: []string{"PATH=" + os.Getenv("PATH"), "PAGER=less"}}, cmd("echo $NO_COLOR $TERM $PAGER $GIT_PAGER"), "1 dumb cat cat\n"},
		{"timeout kills with markers in order", Config{PromoteOnTimeout: no(), Grace: time.Second}, cmd("sleep 5", "timeoutMs", 100), "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"trapped timeout has no exit marker", Config{PromoteOnTimeout: no(), Grace: 5 * time.Second}, cmd("trap 'echo trapped; exit 0' TERM; sleep 5 & wait", "timeoutMs", 1000), "trapped\n[timed out after 1000ms]"},
		{"requested timeout is capped", Config{PromoteOnTimeout: no(), MaxTimeoutMs: 150}, cmd("sleep 5", "timeoutMs", 99999), "(no output)\n[timed out after 150ms]\n[killed by signal: SIGTERM]"},
		{"a fraction of a millisecond is printed as given", Config{PromoteOnTimeout: no()}, cmd("sleep 5", "timeoutMs", 0.5), "(no output)\n[timed out after 0.5ms]\n[killed by signal: SIGTERM]"},
		{"a cut UTF-8 sequence is one replacement character", Config{}, cmd(`printf '\xf0\x9f'`), "\uFFFD"},
		{"two bytes that lead nothing are two", Config{}, cmd(`printf 'a\xff\xffb'`), "a\uFFFD\uFFFDb"},
		{"stderr is decoded the same way", Config{}, cmd(`printf 'x\xe2\x82' >&2`), "[stderr]\nx\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newTool(t, tt.cfg, Deps{})
			got, err := run(t, tool, call(agent(t, "s", ws), tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestForegroundTruncationPointsAtFullOutput(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{MaxOutputBytes: 1000}, Deps{})
	got, err := run(t, tool, call(agent(t, "s", ws), cmd("seq 1 5000")))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(got, "\n[output truncated; full output: ")
	if i < 0 || !strings.HasSuffix(got, "]") || !strings.HasSuffix(got[:i], "4999\n5000\n") {
		t.Fatalf("got %q", got[max(0, len(got)-200):])
	}
	path := strings.TrimSuffix(got[i+len("\n[output truncated; full output: "):], "]")
	full, err := os.ReadFile(path)
	want, _ := exec.Command("seq", "1", "5000").Output()
	if err != nil || string(full) != string(want) {
		t.Errorf("full output file %s: %v", path, err)
	}
	if len(got[:i]) != 1000 {
		t.Errorf("tail is %d bytes", len(got[:i]))
	}
	upstreamShape(t, path)
}

// upstreamShape checks that path, with the temp dir spelled as upstream's
// /tmp, is a full-output path in upstream's shape, whole.
func upstreamShape(t *testing.T, path string) {
	t.Helper()
	rel, err := filepath.Rel(os.TempDir(), path)
	asTmp := "/tmp/" + rel
	if err != nil || outfile.Pattern.FindString(asTmp) != asTmp {
		t.Errorf("full-output path %q is not upstream's /tmp/dsh-subprocess-XXXXXX/dsh-subprocess-<pid>-<n>-<12hex>-<label>.log", path)
	}
}

// TestSpawnFailureIsAnError: a start that fails before the command runs
// reads as Node's spawn error, the text upstream's bash shows: the shell's
// name with an errno Node reports asynchronously, the errno alone with one
// it throws. Not a runner failure (no SANDBOX_UNAVAILABLE code).
func TestSpawnFailureIsAnError(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		args map[string]any
		want string
	}{
		{"missing workdir", Config{}, cmd("true", "workdir", "nope"), "spawn bash ENOENT"},
		{"missing absolute workdir", Config{}, cmd("true", "workdir", "/nonexistent/dir"), "spawn bash ENOENT"},
		{"workdir is a file", Config{}, cmd("true", "workdir", "file"), "spawn ENOTDIR"},
		{"the shell as spelled", Config{Shell: "/nonexistent/dshsim-sh"}, cmd("true"), "spawn /nonexistent/dshsim-sh ENOENT"},
		{"a shell not on PATH", Config{Shell: "dshsim-no-such-shell"}, cmd("true"), "spawn dshsim-no-such-shell ENOENT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := newTool(t, tc.cfg, Deps{})
			_, err := run(t, tool, call(agent(t, "s", ws), tc.args))
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if _, _, coded := pipeline.CodeOf(err); coded {
				t.Errorf("a start failure carries a code: %v", err)
			}
		})
	}
}

// TestBackgroundSpawnFailure: Node reports ENOENT after spawn returned, so
// upstream's background job starts and settles as killed with the spawn
// error on stderr; ENOTDIR is thrown, so the call itself fails.
func TestBackgroundSpawnFailure(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	reg, _ := newJobs(t)
	tool := newTool(t, Config{}, Deps{Jobs: reg})
	a := agent(t, "A", ws)
	if _, err := run(t, tool, call(a, cmd("true", "workdir", "file", "run_in_background", true))); err == nil || err.Error() != "spawn ENOTDIR" {
		t.Errorf("ENOTDIR: err = %v", err)
	}
	got, err := run(t, tool, call(a, cmd("true", "workdir", "nope", "run_in_background", true)))
	if err != nil || got != "started background job bash-1" {
		t.Fatalf("ENOENT: %q, %v", got, err)
	}
	j, _ := reg.Get("A", "bash-1")
	waittest.Closed(t, j.Done(), "the job")
	out, err := jobTools(t, reg)[0].Run(context.Background(), pipeline.NewCall("c", "job_output", json.RawMessage(`{"job_id":"bash-1"}`), a, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[stderr]\nspawn failed: Error: spawn bash ENOENT\n[status: killed, killed before exit]"; out.Content[0].Text != want {
		t.Errorf("job_output = %q, want %q", out.Content[0].Text, want)
	}
}

func TestAbortKillsTheCommand(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "late")
	reg := jobs.NewRegistry(jobs.Options{})
	defer reg.Close(5 * time.Second)
	tool := newTool(t, Config{Grace: 500 * time.Millisecond}, Deps{Jobs: reg})
	ctx, cancel := context.WithCancel(context.Background())
	c := call(agent(t, "s", ws), cmd("sleep 0.5; touch "+marker))
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := runTool(t, tool, ctx, c)
	if !pipeline.HasCode(err, pipeline.CodeAborted) || err.Error() != "tool call aborted" {
		t.Fatalf("err = %v", err)
	}
	time.Sleep(800 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the aborted command kept running")
	}
	if len(reg.List("s")) != 0 {
		t.Error("aborted job left in the registry")
	}
}

func newJobs(t *testing.T) (*jobs.Registry, chan jobs.Notice) {
	ch := make(chan jobs.Notice, 8)
	reg := jobs.NewRegistry(jobs.Options{Notify: func(n jobs.Notice) { ch <- n }})
	t.Cleanup(func() { reg.Close(5 * time.Second) })
	return reg, ch
}

func wait(t *testing.T, ch chan jobs.Notice) jobs.Notice {
	t.Helper()
	return waittest.Recv(t, ch, "the completion notice")
}

func TestForegroundTimeoutPromotedToBackgroundJob(t *testing.T) {
	ws := t.TempDir()
	reg, ch := newJobs(t)
	tool := newTool(t, Config{}, Deps{Jobs: reg})
	ag := agent(t, "s", ws)
	gate := ws + "/gate"
	command := "echo started; while [ ! -e " + gate + " ]; do sleep 0.02; done; echo finished > " + ws + "/proof; echo done"
	got, err := run(t, tool, call(ag, cmd(command, "timeoutMs", 1000)))
	if err != nil {
		t.Fatal(err)
	}
	want := "started\n[still running after 1000ms; moved to background job bash-1]\nThe command keeps running in the background. You will be notified when it finishes; read newer output with job_output, stop it with job_kill."
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	select {
	case n := <-ch:
		t.Fatalf("notice before the command finished: %q", n.Text)
	default:
	}
	os.WriteFile(gate, nil, 0o600)
	n := wait(t, ch)
	if n.Text != "background job bash-1 (bash: "+command+") finished [status: completed, exit code: 0]. Read its output with job_output." {
		t.Errorf("notice = %q", n.Text)
	}
	if b, err := os.ReadFile(ws + "/proof"); err != nil || string(b) != "finished\n" {
		t.Errorf("the promoted command did not finish: %v", err)
	}
	jt := jobTools(t, reg)
	out, err := jt[0].Run(context.Background(), pipeline.NewCall("c2", "job_output", json.RawMessage(`{"job_id":"bash-1"}`), ag, nil))
	if err != nil {
		t.Fatal(err)
	}
	if text := out.Content[0].Text; text != "started\ndone\n[status: completed, exit code: 0]" {
		t.Errorf("job_output = %q", text)
	}
}

func TestForegroundSettlingInTimeLeavesNoJob(t *testing.T) {
	ws := t.TempDir()
	reg, ch := newJobs(t)
	tool := newTool(t, Config{}, Deps{Jobs: reg})
	if got, _ := run(t, tool, call(agent(t, "s", ws), cmd("echo quick"))); got != "quick\n" {
		t.Errorf("got %q", got)
	}
	if len(reg.List("s")) != 0 {
		t.Error("settled foreground job kept")
	}
	select {
	case n := <-ch:
		t.Errorf("notice for a foreground call: %q", n.Text)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestBackgroundJobs(t *testing.T) {
	ws := t.TempDir()
	reg, ch := newJobs(t)
	tool := newTool(t, Config{}, Deps{Jobs: reg})
	a, b := agent(t, "A", ws), agent(t, "B", ws)
	jt := jobTools(t, reg)
	jobCall := func(tl pipeline.Tool, ag *pipeline.Agent, id string) (string, error) {
		out, err := tl.Run(context.Background(), pipeline.NewCall("c", tl.Name, json.RawMessage(`{"job_id":"`+id+`"}`), ag, nil))
		if err != nil {
			return "", err
		}
		return out.Content[0].Text, nil
	}

	got, err := run(t, tool, call(a, cmd("sleep 30", "run_in_background", true)))
	if err != nil || got != "started background job bash-1" {
		t.Fatalf("ack = %q, %v", got, err)
	}
	if _, err := jobCall(jt[0], b, "bash-1"); err == nil || err.Error() != "job bash-1 belongs to another session" {
		t.Errorf("owner B read A's job: %v", err)
	}
	if got, _ := jobCall(jt[0], a, "bash-1"); got != "(no new output)\n[status: running]" {
		t.Errorf("running read = %q", got)
	}
	if got, _ := jobCall(jt[1], a, "bash-1"); got != "requested cancellation of job bash-1" {
		t.Errorf("kill = %q", got)
	}
	if got, _ := jobCall(jt[0], a, "bash-1"); got != "(no new output)\n[status: stopping]" && got != "(no new output)\n[status: killed, signal: SIGTERM]" {
		t.Errorf("read right after kill = %q", got)
	}
	j, _ := reg.Get("A", "bash-1")
	waittest.Closed(t, j.Done(), "the job")
	if got, _ := jobCall(jt[0], a, "bash-1"); got != "(no new output)\n[status: killed, signal: SIGTERM]" {
		t.Errorf("read after kill = %q", got)
	}
	got, _ = run(t, tool, call(b, cmd("echo from-b", "run_in_background", true)))
	if got != "started background job bash-2" {
		t.Errorf("B's first job (ids are per registry) = %q", got)
	}
	n := wait(t, ch) // the killed job sent none: job_kill reported it
	if n.JobID != "bash-2" || n.Text != "background job bash-2 (bash: echo from-b) finished [status: completed, exit code: 0]. Read its output with job_output." {
		t.Errorf("notice = %+v", n)
	}
	if got, _ := jobCall(jt[0], b, "bash-2"); got != "from-b\n[status: completed, exit code: 0]" {
		t.Errorf("B read = %q", got)
	}
	// a job's output is decoded as a foreground command's: one U+FFFD for
	// the cut sequence at its end
	run(t, tool, call(b, cmd(`printf 'cut \xf0\x9f'`, "run_in_background", true)))
	if n := wait(t, ch); n.JobID != "bash-3" {
		t.Fatalf("notice = %+v", n)
	}
	if got, _ := jobCall(jt[0], b, "bash-3"); got != "cut \uFFFD\n[status: completed, exit code: 0]" {
		t.Errorf("read of a cut sequence = %q", got)
	}
}

// jobTools returns the job tools over reg (job_output, job_kill, job_list).
func jobTools(t *testing.T, reg *jobs.Registry) []pipeline.Tool {
	t.Helper()
	tools, err := jobs.New(jobs.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return toolreg.Defs(tools...)
}

// TestAbortLeavesNoOrphan: cancelling a running call terminates its whole
// process group, a member that ignores SIGTERM included (SIGKILL after the
// grace), before the call answers "tool call aborted"; checked from outside
// through /proc once the call returned.
func TestAbortLeavesNoOrphan(t *testing.T) {
	ws := t.TempDir()
	tool := newTool(t, Config{Grace: 300 * time.Millisecond}, Deps{})
	pidFile := filepath.Join(ws, "member.pid")
	command := "(trap '' TERM; exec sleep 300) >/dev/null 2>&1 </dev/null & echo $! > " + pidFile + "; touch started; wait"
	ctx, cancel := context.WithCancel(context.Background())
	var member int
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
				b, _ := os.ReadFile(pidFile)
				member, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				break
			}
		}
		cancel()
	}()
	_, err := runTool(t, tool, ctx, call(agent(t, "s", ws), cmd(command)))
	if member == 0 {
		t.Fatal("the member never started")
	}
	t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL) }) // when the check below fails
	if !pipeline.HasCode(err, pipeline.CodeAborted) || err.Error() != "tool call aborted" {
		t.Fatalf("err = %v", err)
	}
	if procfs.Alive(member) {
		t.Errorf("member %d of the aborted command's group is still alive after the call answered", member)
	}
}
