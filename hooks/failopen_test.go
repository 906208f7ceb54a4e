package hooks_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/hooks"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// Upstream fails open where a hook cannot run; Strict fails closed. Each row
// runs once per mode.
func TestFailOpenAndStrict(t *testing.T) {
	tests := []struct {
		name     string
		hook     string
		marker   string // a file the hook would create if it started ("" = none)
		started  bool
		exit     *int
		stderr   string // stderrSummary prefix
		strictIn string // part of the strict denial
	}{
		{"timeout 0 never starts", cmdTimeout("echo ran > ran; exit 2", "0"), "ran", false, nil, hooks.MsgBadTimeout, "could not start: " + hooks.MsgBadTimeout},
		{"negative timeout never starts", cmdTimeout("echo ran > ran; exit 2", "-1"), "ran", false, nil, hooks.MsgBadTimeout, "could not start"},
		{"command not found is exit 127", cmd("no-such-command-dshsim"), "", true, n(127), "bash: line 1: no-such-command-dshsim: command not found", "exit code 127"},
		{"a command that is not executable is exit 126", cmd("/dev/null"), "", true, n(126), "bash: line 1: /dev/null: Permission denied", "exit code 126"},
		{"timeout kills the hook", cmdTimeout("sleep 30", "0.3"), "", true, nil, "", "timed out after 300ms"},
		{"signal death", cmd("kill -KILL $$"), "", true, nil, "", "killed by SIGKILL"},
	}
	for _, tt := range tests {
		for _, isStrict := range []bool{false, true} {
			name := tt.name + "/upstream fail-open"
			var opts []rigOption
			if isStrict {
				name, opts = tt.name+"/strict", []rigOption{strict}
			}
			t.Run(name, func(t *testing.T) {
				r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", tt.hook)}, opts...)
				res := r.run(echoArgs)
				if _, ok := r.file("ran"); ok && !tt.started {
					t.Error("the hook started")
				}
				ev := r.hookEvents()
				if len(ev) != 2 {
					t.Fatalf("events %v", ev)
				}
				exit, hasExit := ev[1]["exitCode"]
				if (tt.exit == nil) == hasExit || (hasExit && exit != float64(*tt.exit)) {
					t.Errorf("exitCode %v, want %v", exit, tt.exit)
				}
				if sum, _ := ev[1]["stderrSummary"].(string); !strings.HasPrefix(sum, tt.stderr) {
					t.Errorf("stderrSummary %q, want prefix %q", sum, tt.stderr)
				}
				if !isStrict {
					wantResult(t, res, "HELLO\n", false)
					if ev[1]["decision"] != "pass" {
						t.Errorf("decision %v, want pass", ev[1]["decision"])
					}
					return
				}
				if !res.IsError || r.bodyRuns() != 0 || !strings.Contains(res.Text(), tt.strictIn) || !strings.Contains(res.Text(), "strict hooks fail closed") {
					t.Errorf("strict: %q (isError %v, body runs %d), want a denial containing %q", res.Text(), res.IsError, r.bodyRuns(), tt.strictIn)
				}
				if ev[1]["decision"] != "block" {
					t.Errorf("strict decision %v, want block", ev[1]["decision"])
				}
			})
		}
	}
}

// Only the exit code counts: a hook that traps TERM and exits 2 after its
// timeout still blocks.
func TestTimeoutThenExit2Blocks(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmdTimeout("trap 'echo late >&2; exit 2' TERM; sleep 30 & wait", "0.3"))})
	wantResult(t, r.run(echoArgs), "Error: late", true)
}

// The timeout kills the whole process group, grandchildren included.
func TestTimeoutKillsTheGroup(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmdTimeout("sleep 30 & echo $! > child; wait", "0.3"))})
	start := time.Now()
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("the call waited %v for a hook with a 300 ms timeout", el)
	}
	pidText, ok := r.file("child")
	if !ok {
		t.Fatal("the hook did not record its child")
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(pidText))
	// The group was signalled before the call returned; delivery and exit are
	// asynchronous, so give the kernel a moment before calling it a survivor.
	deadline := time.Now().Add(5 * time.Second)
	for procfs.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if procfs.Alive(pid) {
		t.Errorf("grandchild %d survived the timeout by 5 s", pid)
	}
}

// Cancelling the call kills the running hook; the pair is still logged and
// the call ends as cancelled.
func TestCancellationKillsTheHook(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmd("echo $$ > pid; sleep 30"))}, strict)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 500; i++ {
			if pid, _ := r.file("pid"); strings.HasSuffix(pid, "\n") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	res := r.exec(ctx, "call_1", echoArgs)
	wantResult(t, res, "Error: tool call aborted before dispatch", true)
	ev := r.hookEvents()
	if len(ev) != 2 || ev[1]["decision"] != "pass" {
		t.Errorf("events after cancellation: %v (strict never blocks a cancelled call)", ev)
	}
	if _, hasExit := ev[1]["exitCode"]; hasExit {
		t.Error("a killed hook has no exit code")
	}
	pidText, _ := r.file("pid")
	if pid, _ := strconv.Atoi(strings.TrimSpace(pidText)); pid == 0 || procfs.Alive(pid) {
		t.Errorf("hook process %q survived the cancellation", pidText)
	}
}

// A JSON answer longer than the retained tail loses its head and is
// ignored; an exit-2 reason keeps its tail; no overflow file stays behind.
func TestOutputBounds(t *testing.T) {
	out := t.TempDir()
	big := `printf '{"decision":"block","reason":"'; head -c 70000 /dev/zero | tr '\0' x; printf '"}'`
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmd(big))}, func(o *hooks.Options) { o.Runtime.OutputDir = out })
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
	r = newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmd(`head -c 70000 /dev/zero | tr '\0' y >&2; echo END >&2; exit 2`))}, func(o *hooks.Options) { o.Runtime.OutputDir = out })
	res := r.run(echoArgs)
	if !res.IsError || len(res.Text()) != len("Error: ")+63999 || !strings.HasSuffix(res.Text(), "yyyEND") {
		t.Errorf("reason length %d, want the 64000-byte tail trimmed", len(res.Text()))
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("overflow files left behind: %v", left)
	}
}

func TestStderrSummaryCap(t *testing.T) {
	long := cmd(`head -c 600 /dev/zero | tr '\0' x >&2`)
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", long)})
	r.run(echoArgs)
	if sum := r.hookEvents()[1]["stderrSummary"].(string); sum != strings.Repeat("x", 500)+"…" {
		t.Errorf("default cap: %d chars", len([]rune(sum)))
	}
	forty := 40.0
	r = newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", long)}, func(o *hooks.Options) { o.StderrSummaryMaxChars = &forty })
	r.run(echoArgs)
	if sum := r.hookEvents()[1]["stderrSummary"].(string); sum != strings.Repeat("x", 40)+"…" {
		t.Errorf("cap 40: %q", sum)
	}
}

func TestBadOptionsFailLoad(t *testing.T) {
	for _, d := range hooks.Dialects {
		for _, v := range []float64{0, -5, 1.5} {
			_, err := hooks.Load(d, hooks.Options{ConfigPath: "x", StderrSummaryMaxChars: &v})
			if want := d.Plugin + ": stderrSummaryMaxChars must be a positive integer"; err == nil || err.Error() != want {
				t.Errorf("%s stderrSummaryMaxChars %v: got %v, want %q", d.Name, v, err, want)
			}
		}
		if _, err := hooks.Load(d, hooks.Options{}); err == nil {
			t.Errorf("%s: a missing configPath must fail", d.Name)
		}
	}
}

// A file that cannot be used disables its bridge only, says so in
// upstream's words and, better, with file, line and field; strict refuses
// every call; a missing file is just "no hooks".
func TestLoadFailures(t *testing.T) {
	invalid := config("PreToolUse", `"["`, cmd("exit 0"))
	r := newRig(t, map[string]string{
		"hooks.json":       `{"hooks": {"UserPromptSubmit": [{"hooks": [` + cmd("exit 2") + `]}], "PreToolUse": [{"matcher": "[", "hooks": [` + cmd("exit 2") + `]}]}}`,
		"codex-hooks.json": config("PreToolUse", `"bash"`, cmd("echo codex ran > codex-ran")),
	})
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
	if _, ok := r.file("codex-ran"); !ok {
		t.Error("the Codex bridge must be unaffected by the Claude Code file")
	}
	cc := r.bridges[0]
	want := `hooks-claude-code: could not load hook config "./hooks.json": SyntaxError: invalid claude-code regex matcher "[" on event "PreToolUse" — no hooks registered`
	if w := cc.Warnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q\nwant %q", w, want)
	}
	probs := cc.Status().Problems()
	if len(probs) != 1 || !strings.Contains(probs[0], filepath.Join(r.ws, "hooks.json")+":1:") || !strings.Contains(probs[0], "hooks.PreToolUse[0].matcher") {
		t.Errorf("problems %q", probs)
	}
	for _, e := range r.hookEvents() {
		if e["dialect"] == "claude-code" || strings.HasPrefix(e["handlerId"].(string), "claude-code") {
			t.Errorf("a rejected file logged %v", e)
		}
	}

	r = newRig(t, map[string]string{"hooks.json": invalid}, strict)
	res := r.run(echoArgs)
	if !res.IsError || r.bodyRuns() != 0 || !strings.Contains(res.Text(), "strict hooks refuse every tool call") {
		t.Errorf("strict with a rejected file: %q", res.Text())
	}

	r = newRig(t, nil, strict)
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
	st := r.bridges[1].Status()
	if st.Err == nil || !st.Err.Missing || len(st.Problems()) != 0 {
		t.Errorf("missing file status %+v", st)
	}
	if w := r.bridges[1].Warnings(); len(w) != 1 || w[0] != `hooks-codex: could not load hook config "./codex-hooks.json": Error: ENOENT: no such file or directory, open './codex-hooks.json' — no hooks registered` {
		t.Errorf("missing file warning %q", w)
	}
}

func TestIgnoredOutputsAreLogged(t *testing.T) {
	r := newRig(t, map[string]string{
		"hooks.json":       config("PreToolUse", "-", cmd(`echo '{"systemMessage":"hi","hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"rm -rf /"}}}'`)),
		"codex-hooks.json": config("PreToolUse", "-", cmd(`echo '{"systemMessage":"hi","hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"x"}}}'`)),
	})
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
	if r.calls[0] != echoArgs {
		t.Errorf("the tool ran with %s, want the original arguments", r.calls[0])
	}
	wantCC := []string{"hooks-claude-code: PreToolUse hook requested updatedInput, which is not yet honored (ignored)", "hooks-claude-code: PreToolUse hook emitted a systemMessage, which is not yet surfaced (ignored)"}
	if w := r.bridges[0].Warnings(); strings.Join(w, "|") != strings.Join(wantCC, "|") {
		t.Errorf("claude-code warnings %q", w)
	}
	if w := r.bridges[1].Warnings(); len(w) != 1 || w[0] != "hooks-codex: PreToolUse hook emitted a systemMessage, which is not yet surfaced (ignored)" {
		t.Errorf("codex warnings %q (Codex is silent about updatedInput)", w)
	}
}

func TestContinueFalseIsNotEnforced(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmd(`echo '{"continue":false,"stopReason":"halt"}'`))})
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
	if ev := r.hookEvents(); ev[1]["decision"] != "stop" {
		t.Errorf("decision %v, want stop", ev[1]["decision"])
	}
}

func TestAnotherEventsDecisionIsDropped(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmd(`echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}'`))})
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
}

// Hooks run under the runtime's sandbox policy (the deployment default),
// through the real provider: under read-only a hook cannot write the
// workspace, and without a confiner a confined hook cannot start.
func TestHooksRunConfined(t *testing.T) {
	write := config("PreToolUse", "-", cmd("touch wrote; echo done"))
	r := newRig(t, map[string]string{"hooks.json": write}, func(o *hooks.Options) { o.Runtime.Sandbox.Mode = sandbox.ReadOnly })
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
	if _, ok := r.file("wrote"); ok {
		t.Error("a confined hook without a confiner ran")
	}
	if sum, _ := r.hookEvents()[1]["stderrSummary"].(string); !strings.Contains(sum, "Confiner") {
		t.Errorf("stderrSummary %q should say why it did not start", sum)
	}
	r = newRig(t, map[string]string{"hooks.json": write}, strict, func(o *hooks.Options) { o.Runtime.Sandbox.Mode = sandbox.ReadOnly })
	if res := r.run(echoArgs); !res.IsError {
		t.Errorf("strict: a hook that cannot be confined must block, got %q", res.Text())
	}

	sandboxtest.RequireBwrap(t)
	provider, err := sandbox.NewProvider(sandbox.Config{Chain: []string{sandbox.BackendBwrap}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		r = newRigIn(t, sandboxtest.TempDir(t, "hooks-ws-"), map[string]string{"hooks.json": write}, func(o *hooks.Options) {
			o.Runtime.Sandbox.Mode, o.Runtime.Confiner = mode, provider
		})
		wantResult(t, r.run(echoArgs), "HELLO\n", false)
		_, wrote := r.file("wrote")
		if wrote != (mode == sandbox.WorkspaceWrite) {
			t.Errorf("%s: hook wrote the workspace = %v", mode, wrote)
		}
		if ev := r.hookEvents(); ev[1]["exitCode"] != 0.0 && mode == sandbox.WorkspaceWrite {
			t.Errorf("%s: %v", mode, ev[1])
		}
	}
}
