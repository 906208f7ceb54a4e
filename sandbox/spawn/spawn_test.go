package spawn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain/chaintest"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/internal/seal"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestMain(m *testing.M) {
	if backend := os.Getenv(ttyHelperEnv); backend != "" {
		os.Exit(ttyHelper(backend))
	}
	if backend := os.Getenv(fdHelperEnv); backend != "" {
		os.Exit(fdHelper(backend))
	}
	if os.Getenv(signalHelperEnv) != "" {
		os.Exit(signalHelper())
	}
	os.Exit(sandboxtest.Main(m))
}

// varTmpDir is sandboxtest.TempDir: workspaces and "outside" targets must not
// live under /tmp, which Landlock's workspace-write grants wholesale and bwrap
// covers with a fresh tmpfs.
var varTmpDir = sandboxtest.TempDir

// provider is the real provider with backend as its only candidate; it skips
// t when the backend cannot confine here.
var provider = sandboxtest.Provider

// confiner is the real confiner of a backend: the provider restricted to
// bwrap or the Landlock runner, or, for inproc.Backend, the stack's default
// Landlock path (package sandbox/chain: in-process, threads reused).
func confiner(t testing.TB, backend string) Confiner {
	t.Helper()
	if backend != inproc.Backend {
		return provider(t, backend)
	}
	return chaintest.Landlock(t, sandbox.Config{})
}

func bash(cmd string) []string { return []string{"bash", "-c", cmd} }

// TestRealRuns runs real commands under bwrap and Landlock in both confined
// modes and checks the world (files on disk) and the classification.
func TestRealRuns(t *testing.T) {
	type outcome struct {
		exit    int
		denied  bool
		landed  bool // the target file exists on the host afterwards
		checkFS bool
	}
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock, inproc.Backend} {
		for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.ReadOnly} {
			t.Run(backend+"/"+string(mode), func(t *testing.T) {
				p := confiner(t, backend)
				ws, outside := varTmpDir(t, "dshsim-ws-"), varTmpDir(t, "dshsim-out-")
				tmpTarget := filepath.Join("/tmp", fmt.Sprintf("dshsim-spawn-%d-%s-%s", os.Getpid(), backend, mode))
				t.Cleanup(func() { os.Remove(tmpTarget) })
				ww := mode == sandbox.WorkspaceWrite
				tests := []struct {
					name   string
					cmd    string
					target string
					want   outcome
				}{
					{name: "write inside the workspace", cmd: "echo hi > " + ws + "/in.txt", target: ws + "/in.txt",
						want: map[bool]outcome{true: {exit: 0, landed: true, checkFS: true}, false: {exit: 1, denied: true, checkFS: true}}[ww]},
					{name: "write outside the workspace is denied", cmd: "echo hi > " + outside + "/out.txt", target: outside + "/out.txt",
						want: outcome{exit: 1, denied: true, checkFS: true}},
					{name: "dev null is a writable sink", cmd: "echo hi > /dev/null", want: outcome{exit: 0}},
					{name: "temp dir", cmd: "echo hi > " + tmpTarget + " && cat " + tmpTarget, target: tmpTarget,
						// bwrap's /tmp is a fresh tmpfs: the write works inside and vanishes; Landlock grants the host /tmp.
						want: map[bool]outcome{true: {exit: 0, landed: backend != sandbox.BackendBwrap, checkFS: true}, false: {exit: 1, denied: true, checkFS: true}}[ww]},
					{name: "false is the command's own failure", cmd: "false", want: outcome{exit: 1}},
					{name: "grep with no match is the command's own failure", cmd: "echo abc | grep zzz", want: outcome{exit: 1}},
					{name: "missing command exits 127 without denial", cmd: "no-such-command-dshsim", want: outcome{exit: 127}},
				}
				for _, tc := range tests {
					t.Run(tc.name, func(t *testing.T) {
						res, err := Run(context.Background(), Request{Argv: bash(tc.cmd), Policy: sandbox.Policy{Mode: mode, WorkspaceRoot: ws}, Confiner: p})
						if err != nil {
							t.Fatalf("Run: %v", err)
						}
						if res.Sandbox == nil {
							t.Fatalf("a confined run without a report: %+v", res)
						}
						if res.ExitCode != tc.want.exit || res.Sandbox.Denied != tc.want.denied || res.Sandbox.RunnerFailed {
							t.Errorf("exit %d denied %v runnerFailed %v, want exit %d denied %v; stderr %q",
								res.ExitCode, res.Sandbox.Denied, res.Sandbox.RunnerFailed, tc.want.exit, tc.want.denied, res.Stderr.Text)
						}
						if res.Sandbox.Mode != mode || res.Sandbox.Backend != backend || res.Sandbox.Enforcement != sandbox.Full {
							t.Errorf("report %+v", res.Sandbox)
						}
						// The in-process path reports what the runner reports:
						// Landlock's admissions, not none.
						wantUngoverned := []string(nil)
						if backend != sandbox.BackendBwrap {
							d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
							wantUngoverned = d.Ungoverned
						}
						if d := cmp.Diff(wantUngoverned, res.Sandbox.Ungoverned); d != "" {
							t.Errorf("report's Ungoverned (-want +got):\n%s", d)
						}
						if tc.want.checkFS {
							_, statErr := os.Stat(tc.target)
							if landed := statErr == nil; landed != tc.want.landed {
								t.Errorf("%s on host: exists=%v, want %v", tc.target, landed, tc.want.landed)
							}
						}
						text := render.Result(render.Foreground{ExitCode: res.ExitCode, Stderr: render.Stream(res.Stderr), Sandbox: res.Sandbox}, true)
						if tc.want.denied != strings.Contains(text, sandbox.DenialMarker(mode)+"\n"+sandbox.EscalationHint("command")) {
							t.Errorf("rendered text and denial disagree:\n%s", text)
						}
					})
				}
			})
		}
	}
}

func TestMissingRunnerFailsClosed(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	marker := filepath.Join(ws, "ran")
	tests := []struct {
		name       string
		cfg        sandbox.Config
		wantDetail string
	}{
		{name: "landlock launcher that does not exist", cfg: sandbox.Config{Platform: "linux", Chain: []string{"landlock"}, LauncherPath: "/nonexistent/dshsim/landlock-run"},
			wantDetail: "Error: spawn /nonexistent/dshsim/landlock-run ENOENT"},
		{name: "bwrap-style runner command that does not exist", cfg: sandbox.Config{RunnerCommand: []string{"/nonexistent/dshsim/bwrap"}, RunnerFailureSignatures: []string{"bwrap: "}},
			wantDetail: "Error: spawn /nonexistent/dshsim/bwrap ENOENT"},
		{name: "bare runner name not on PATH", cfg: sandbox.Config{RunnerCommand: []string{"dshsim-no-such-runner"}, RunnerFailureSignatures: []string{"runner: "}},
			wantDetail: "Error: spawn dshsim-no-such-runner ENOENT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sandbox.NewProvider(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Start(context.Background(), Request{Argv: bash("touch " + marker), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: p})
			var ue *sandbox.UnavailableError
			if !errors.As(err, &ue) || ue.Detail != tc.wantDetail || ue.Mode != sandbox.ReadOnly {
				t.Fatalf("Start error = %v, want UnavailableError with detail %q", err, tc.wantDetail)
			}
			if !strings.HasSuffix(err.Error(), "danger-full-access. Runner failure: "+tc.wantDetail) {
				t.Errorf("message %q", err.Error())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran")
			}
		})
	}
}

func TestRunnerFailureAfterStart(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	runnerPath := sandboxtest.Runner(t)
	ws := varTmpDir(t, "dshsim-ws-")
	// landlock-run used as a runnerCommand gets bwrap's profile args, which it
	// rejects as unknown arguments: a runner-level failure (125 + one fatal
	// line) after a successful start.
	p, err := sandbox.NewProvider(sandbox.Config{RunnerCommand: []string{runnerPath}, RunnerFailureSignatures: []string{"landlock-run: "}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Request{Argv: bash("touch " + ws + "/ran"), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: p})
	var ue *sandbox.UnavailableError
	if !errors.As(err, &ue) || ue.Detail != "landlock-run: usage error: unknown argument: --ro-bind" {
		t.Fatalf("Wait error = %v", err)
	}
	if !res.Sandbox.RunnerFailed || res.Sandbox.Denied || res.ExitCode != 125 {
		t.Errorf("facts %+v exit %d", res.Sandbox, res.ExitCode)
	}
	if _, err := os.Stat(ws + "/ran"); err == nil {
		t.Error("the command ran")
	}
}

// TestCappedLandlockRunner: a provider with LandlockABICap runs the real
// runner capped below ABI 5; the runner's own partial notice is in the
// command's stderr, the enforcement is partial, and the command's exit code
// is its own (the notice is informational, not a runner failure).
func TestCappedLandlockRunner(t *testing.T) {
	sandboxtest.RequireLandlock(t, 4)
	ws := varTmpDir(t, "dshsim-ws-")
	p, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{sandbox.BackendLandlock}, LauncherPath: sandboxtest.Runner(t), LandlockABICap: 3})
	if err != nil {
		t.Fatal(err)
	}
	if backend, enf := p.Selected(); backend != sandbox.BackendLandlock || enf != sandbox.Partial {
		t.Fatalf("selected %s %s, want landlock partial", backend, enf)
	}
	w, err := p.Confine(context.Background(), bash("false"), sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws})
	if err != nil || w.Argv[1] != "--abi-cap" || w.Argv[2] != "3" {
		t.Fatalf("confined %q, %v", w.Argv, err)
	}
	res, err := Run(context.Background(), Request{Argv: bash("false"), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: p})
	if err != nil || res.ExitCode != 1 || res.Stderr.Text != sandbox.LandlockPartialNotice+"\n" || res.Sandbox.RunnerFailed || res.Sandbox.Enforcement != sandbox.Partial {
		t.Errorf("result %+v, %v", res, err)
	}
	if _, err := sandbox.NewProvider(sandbox.Config{LandlockABICap: -1}); err == nil {
		t.Error("a negative cap was accepted")
	}
}

func TestDangerFullAccessBypassesTheConfiner(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	res, err := Run(context.Background(), Request{Argv: bash("echo hi > out.txt; echo done"), Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws},
		Confiner: confinerFunc(func() { t.Error("confiner called for danger-full-access") })})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout.Text != "done\n" || res.Sandbox != nil {
		t.Errorf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err != nil {
		t.Errorf("unconfined write: %v", err)
	}
}

type confinerFunc func()

func (f confinerFunc) Confine(context.Context, []string, sandbox.Policy) (sandbox.ConfinedArgv, error) {
	f()
	return sandbox.ConfinedArgv{}, errors.New("unexpected")
}

func TestConfineErrorsPropagateAndNothingRuns(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	p, _ := sandbox.NewProvider(sandbox.Config{Platform: "plan9"})
	_, err := Start(context.Background(), Request{Argv: bash("touch " + ws + "/ran"), Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, Confiner: p})
	var ue *sandbox.UnavailableError
	if !errors.As(err, &ue) || ue.Detail != "" {
		t.Errorf("err = %v", err)
	}
	_, err = Start(context.Background(), Request{Argv: bash("true"), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: "relative"}, Confiner: provider(t, sandbox.BackendBwrap)})
	if !errors.Is(err, sandbox.ErrBadInput) {
		t.Errorf("relative root: %v", err)
	}
	if _, err := Start(context.Background(), Request{Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}}); err == nil {
		t.Error("empty argv accepted")
	}
	if _, err := Start(context.Background(), Request{Argv: bash("true"), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}}); err == nil {
		t.Error("confined mode without a confiner accepted")
	}
	if _, err := os.Stat(ws + "/ran"); err == nil {
		t.Error("the command ran")
	}
}

func TestInvalidWorkdirStaysAnOrdinaryStartError(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	_, err := Start(context.Background(), Request{Argv: bash("true"), Dir: ws + "/missing", Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: provider(t, sandbox.BackendBwrap)})
	var ue *sandbox.UnavailableError
	if err == nil || errors.As(err, &ue) {
		t.Errorf("missing workdir: %v, want an ordinary start error", err)
	}
}

func TestOutputTailAndFullFile(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	res, err := Run(context.Background(), Request{Argv: bash("seq 1 20000; seq 1 3 >&2"), TailBytes: 1000, OutputDir: ws,
		Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stdout.Truncated || len(res.Stdout.Text) > 1000 || !strings.HasSuffix(res.Stdout.Text, "19999\n20000\n") {
		t.Errorf("stdout tail: truncated=%v len=%d", res.Stdout.Truncated, len(res.Stdout.Text))
	}
	full, err := os.ReadFile(res.Stdout.FullPath)
	want, _ := exec.Command("seq", "1", "20000").Output()
	if err != nil || string(full) != string(want) {
		t.Errorf("full output file %q: %d bytes, err %v", res.Stdout.FullPath, len(full), err)
	}
	if st, err := os.Stat(res.Stdout.FullPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("full output file mode: %v %v", st.Mode(), err)
	}
	if res.Stderr.Truncated || res.Stderr.Text != "1\n2\n3\n" || res.Stderr.FullPath != "" {
		t.Errorf("stderr %+v", res.Stderr)
	}
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	res, err := Run(context.Background(), Request{Argv: bash("echo started; sleep 30 & wait"), Timeout: 200 * time.Millisecond, Grace: time.Second,
		Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || !res.Signaled || res.Signal != "SIGTERM" || res.ExitCode != -1 || res.Stdout.Text != "started\n" {
		t.Errorf("result %+v", res)
	}
	if strings.Contains(render.Result(render.Foreground{ExitCode: res.ExitCode, Signaled: res.Signaled, Signal: res.Signal, TimedOut: res.TimedOut, TimeoutMs: 200}, false), "[exit code") {
		t.Error("a killed process rendered an exit code")
	}
}

func TestProcessKeepsRunningPastAForegroundWait(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	p, err := Start(context.Background(), Request{Argv: bash("echo one; read line; echo two"), Stdin: strings.NewReader(""),
		Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
	if err != nil {
		t.Fatal(err)
	}
	waittest.Closed(t, p.Done(), "the process")
	res, err := p.Wait()
	if err != nil || res.Stdout.Text != "one\ntwo\n" {
		t.Errorf("res %+v err %v", res, err)
	}
	// A long process: the caller's wait expires, the process keeps running, Kill ends it.
	p, err = Start(context.Background(), Request{Argv: bash("echo early; exec sleep 30"), Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
		t.Fatal("settled early")
	case <-time.After(300 * time.Millisecond):
	}
	if out, _ := p.OutputSoFar(); out.Text != "early\n" {
		t.Errorf("output so far %q", out.Text)
	}
	p.Kill()
	waittest.Closed(t, p.Done(), "the killed process")
	res, _ = p.Wait()
	if !res.Signaled || res.Signal != "SIGTERM" || res.TimedOut {
		t.Errorf("after Kill: %+v", res)
	}
}

func TestContextCancelKillsTheGroup(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Request{Argv: bash("trap '' TERM; sleep 30"), Grace: 200 * time.Millisecond, Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	waittest.Closed(t, p.Done(), "the cancelled process")
	res, _ := p.Wait()
	if !res.Signaled {
		t.Errorf("after cancel: %+v", res)
	}
}

// TestKillLeavesNoMemberOfTheGroup: a member of the group that ignores
// SIGTERM, and whose leader died of it (so the leader's exit alone would
// settle the run), is gone when the run settles: the reaper kills what the
// leader left before the result is out, without waiting for the grace; and
// Reaped closes. Checked from outside through /proc.
func TestKillLeavesNoMemberOfTheGroup(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	pidFile := filepath.Join(ws, "member.pid")
	// The member writes its pid once it ignores SIGTERM: written by the
	// parent right after the fork, a kill could beat the trap under load.
	cmd := "(trap '' TERM; echo $BASHPID > " + pidFile + "; exec sleep 300) >/dev/null 2>&1 </dev/null & wait"
	p, err := Start(context.Background(), Request{Argv: bash(cmd), Grace: 200 * time.Millisecond, Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
	if err != nil {
		t.Fatal(err)
	}
	var member int
	for deadline := time.Now().Add(10 * time.Second); member == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		member, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if member == 0 {
		t.Fatal("the member never started")
	}
	t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL) }) // when the check below fails
	p.Kill()
	waittest.Closed(t, p.Done(), "the process")
	if procfs.Alive(member) {
		t.Errorf("the member %d ignoring SIGTERM outlived the settled run", member)
	}
	select {
	case <-p.Reaped():
	case <-time.After(10 * time.Second):
		t.Fatal("Reaped never closed")
	}
	if procfs.Alive(member) {
		t.Errorf("member %d is still alive after Reaped: an orphan was left", member)
	}
}

// TestReapedAfterASettledKill: Kill after the process settled signals
// nothing and closes Reaped at once; nobody killed, it stays open.
func TestReapedAfterASettledKill(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	p, err := Start(context.Background(), Request{Argv: bash("true"), Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
	if err != nil {
		t.Fatal(err)
	}
	waittest.Closed(t, p.Done(), "the process")
	select {
	case <-p.Reaped():
		t.Fatal("Reaped closed although nobody killed")
	default:
	}
	p.Kill()
	select {
	case <-p.Reaped():
	case <-time.After(5 * time.Second):
		t.Fatal("Reaped not closed by a Kill after settle")
	}
	if !p.KillRequested() {
		t.Error("KillRequested false after Kill")
	}
}

// wrapAs is a broken confiner: it returns a fixed shape built from the
// caller's argv, claiming full bwrap enforcement.
type wrapAs func(argv []string) []string

func (f wrapAs) Confine(_ context.Context, argv []string, _ sandbox.Policy) (sandbox.ConfinedArgv, error) {
	d, _ := sandbox.DialectOf(sandbox.BackendBwrap)
	return sandbox.ConfinedArgv{Argv: f(append([]string(nil), argv...)), Backend: sandbox.BackendBwrap, Enforcement: sandbox.Full,
		DenialSignatures: d.DenialSignatures, RunnerFailureRules: d.RunnerFailureRules}, nil
}

// grants is a constructed confiner: it wraps argv as "env -- argv" (a real
// runner shape that confines nothing) and edits what it returns with f.
type grants func(w *sandbox.ConfinedArgv)

func (f grants) Confine(_ context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
	w := sandbox.ConfinedArgv{Argv: sandbox.Wrap([]string{"env"}, nil, argv), Backend: "constructed", Enforcement: sandbox.Full, Policy: p}
	f(&w)
	return w, nil
}

// A confiner must grant the mode the call asked for, and a confiner that
// starts the command itself must start exactly the command; anything else is
// refused before it runs. The control shows the constructed confiner runs
// when it keeps both promises.
func TestConfinerMustGrantWhatWasAsked(t *testing.T) {
	tests := []struct {
		name string
		edit grants
		runs bool
	}{
		{"the promised shape and mode run (control)", func(*sandbox.ConfinedArgv) {}, true},
		{"a wider mode granted runs nothing", func(w *sandbox.ConfinedArgv) { w.Policy.Mode = sandbox.WorkspaceWrite }, false},
		{"no mode granted runs nothing", func(w *sandbox.ConfinedArgv) { w.Policy = sandbox.Policy{} }, false},
		{"a confiner-started command other than the one asked runs nothing", func(w *sandbox.ConfinedArgv) {
			w.Start = (*exec.Cmd).Start // argv still wrapped: not the command as given
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := varTmpDir(t, "dshsim-ws-")
			marker := filepath.Join(ws, "ran")
			_, err := Run(context.Background(), Request{Argv: bash("touch " + marker), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: tc.edit})
			_, serr := os.Stat(marker)
			if ran := serr == nil; ran != tc.runs || (err == nil) != tc.runs {
				t.Errorf("ran %v, err %v; want ran %v", ran, err, tc.runs)
			}
		})
	}
}

// Detach unties the process from Start's context: a done context neither
// refuses the start nor kills the process, and still reaches the confiner.
func TestDetachUntiesTheProcessFromTheContext(t *testing.T) {
	ws := varTmpDir(t, "dshsim-ws-")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dfa := sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}
	if _, err := Start(ctx, Request{Argv: bash("true"), Policy: dfa}); !errors.Is(err, context.Canceled) {
		t.Errorf("attached start with a done context: %v, want context.Canceled", err)
	}
	res, err := Run(ctx, Request{Argv: bash("sleep 0.3; echo survived"), Policy: dfa, Detach: true})
	if err != nil || res.Stdout.Text != "survived\n" || res.Signaled {
		t.Errorf("detached run: %+v, %v", res, err)
	}
	p := provider(t, sandbox.BackendBwrap)
	_, err = Start(ctx, Request{Argv: bash("true"), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Detach: true, Confiner: p})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("detached confined start with a done context: %v, want the confiner's context.Canceled", err)
	}
}

// A confiner whose argv does not wrap the command (runner, profile, "--",
// the exact argv) must not be spawned: a passthrough would run the command
// unconfined under confined facts, an empty argv would panic.
func TestConfinerThatDoesNotWrapIsRefused(t *testing.T) {
	tests := []struct {
		name string
		wrap wrapAs
	}{
		{"passthrough runs nothing", func(a []string) []string { return a }},
		{"empty argv runs nothing", func([]string) []string { return nil }},
		{"separator without a runner runs nothing", func(a []string) []string { return append([]string{"--"}, a...) }},
		{"runner without the separator runs nothing", func(a []string) []string { return append([]string{"env"}, a...) }},
		{"a different command after the separator runs nothing", func(a []string) []string {
			return []string{"env", "--", "bash", "-c", strings.TrimSuffix(a[2], "; exit 0")}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := varTmpDir(t, "dshsim-ws-")
			marker := filepath.Join(ws, "ran")
			var res Result
			var err error
			func() {
				defer func() {
					if v := recover(); v != nil {
						err = fmt.Errorf("panic: %v", v)
					}
				}()
				res, err = Run(context.Background(), Request{Argv: bash("touch " + marker + "; exit 0"),
					Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: tc.wrap})
			}()
			if err == nil || strings.HasPrefix(err.Error(), "panic: ") {
				t.Errorf("err = %v (result %+v), want a refusal", err, res)
			}
			if _, serr := os.Stat(marker); serr == nil {
				t.Error("the command ran")
			}
		})
	}
}

// In workspace-write bwrap mounts a fresh tmpfs over /tmp, so a working
// directory under the host's /tmp (outside the workspace) does not exist in
// the sandbox, and bwrap silently starts the command in $HOME (or /) instead.
// Here HOME is the workspace: "touch here" in the scratch directory would
// land in the workspace and report success. The call must be refused.
func TestBwrapWorkdirHiddenByTheTmpfsIsRefused(t *testing.T) {
	p := provider(t, sandbox.BackendBwrap)
	ws := varTmpDir(t, "dshsim-ws-")
	// Under the host's /tmp itself, whatever $TMPDIR says.
	scratch, err := os.MkdirTemp("/tmp", "dshsim-workdir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	res, err := Run(context.Background(), Request{Argv: bash("pwd; touch here"), Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws},
		Confiner: p, Dir: scratch, Env: append(os.Environ(), "HOME="+ws)})
	if err == nil {
		t.Errorf("ran in %q (exit %d), want a refusal", strings.TrimSpace(res.Stdout.Text), res.ExitCode)
	}
	for _, f := range []string{filepath.Join(ws, "here"), filepath.Join(scratch, "here")} {
		if _, serr := os.Stat(f); serr == nil {
			t.Errorf("the command wrote %s", f)
		}
	}
	// A workdir under the workspace, and any workdir in read-only mode (the
	// host /tmp is bound read-only there), still run where they were asked.
	for _, tc := range []struct {
		mode sandbox.Mode
		dir  string
	}{{sandbox.WorkspaceWrite, ws}, {sandbox.ReadOnly, scratch}} {
		res, err := Run(context.Background(), Request{Argv: bash("pwd"), Policy: sandbox.Policy{Mode: tc.mode, WorkspaceRoot: ws}, Confiner: p, Dir: tc.dir})
		if err != nil || strings.TrimSpace(res.Stdout.Text) != tc.dir {
			t.Errorf("%s in %s: pwd %q, err %v", tc.mode, tc.dir, res.Stdout.Text, err)
		}
	}
}

// A confined command must not change the running kernel through
// /proc/sys. bwrap shares the host's procfs (no --unshare-pid) and covers
// /proc/sys read-only only when it looks writable to it, which it does not
// for root without capabilities: run by root, the profile left
// /proc/sys/kernel/core_pattern writable (a core pattern "|<program>" runs
// that program as root outside any sandbox). The command writes the current
// value back, so the kernel is unchanged even when the write goes through.
func TestProcSysIsReadOnly(t *testing.T) {
	const knob = "/proc/sys/kernel/core_pattern"
	if _, err := os.Stat(knob); err != nil {
		t.Skipf("%s: %v", knob, err)
	}
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
			t.Run(backend+" "+string(mode), func(t *testing.T) {
				p := provider(t, backend)
				ws := varTmpDir(t, "dshsim-ws-")
				res, err := Run(context.Background(), Request{Argv: bash(`v=$(cat ` + knob + `) && printf '%s\n' "$v" > ` + knob),
					Policy: sandbox.Policy{Mode: mode, WorkspaceRoot: ws}, Confiner: p})
				if err != nil {
					t.Fatal(err)
				}
				if res.ExitCode == 0 {
					t.Fatalf("the confined command wrote %s", knob)
				}
				if os.Geteuid() == 0 && !res.Sandbox.Denied { // without root the kernel refuses first (EACCES)
					t.Errorf("not classified as a denial: exit %d, stderr %q", res.ExitCode, res.Stderr.Text)
				}
			})
		}
	}
}

// A confined command must not write another process's /proc files either.
// Before bwrap's profile gained --unshare-pid its /proc was the host's
// procfs, and a bwrap-confined command raised the OOM score of a host
// process it does not own. Now the host process is not in the sandbox's
// /proc at all, and the sandbox's own processes (/proc/1 is bwrap's init
// there) sit on a read-only /proc: both writes fail, the second with EROFS,
// a denial. Landlock refuses both (/proc is not granted). The target is a
// sleep this test starts; /dev/stderr (a /proc/self/fd magic link to the
// pipe) must still work.
func TestProcOfOtherProcessesIsReadOnly(t *testing.T) {
	target := exec.Command("sleep", "60")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	knob := fmt.Sprintf("/proc/%d/oom_score_adj", target.Process.Pid)
	before, err := os.ReadFile(knob)
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
			t.Run(backend+" "+string(mode), func(t *testing.T) {
				p := provider(t, backend)
				ws := varTmpDir(t, "dshsim-ws-")
				res, err := Run(context.Background(), Request{Argv: bash("echo via-magic-link > /dev/stderr; echo 500 > " + knob + "; echo 500 > /proc/1/oom_score_adj"),
					Policy: sandbox.Policy{Mode: mode, WorkspaceRoot: ws}, Confiner: p})
				if err != nil {
					t.Fatal(err)
				}
				if after, _ := os.ReadFile(knob); string(after) != string(before) {
					os.WriteFile(knob, before, 0)
					t.Fatalf("the confined command changed %s from %q to %q", knob, before, after)
				}
				if res.ExitCode == 0 || !res.Sandbox.Denied {
					t.Errorf("exit %d, denied %v, stderr %q; want a denial", res.ExitCode, res.Sandbox.Denied, res.Stderr.Text)
				}
				if !strings.HasPrefix(res.Stderr.Text, "via-magic-link\n") {
					t.Errorf("stderr %q: the /dev/stderr write did not go through", res.Stderr.Text)
				}
				if backend == sandbox.BackendBwrap && !strings.Contains(res.Stderr.Text, knob+": No such file or directory") {
					t.Errorf("stderr %q: the host process %d is visible in the sandbox's /proc (no PID namespace?)", res.Stderr.Text, target.Process.Pid)
				}
			})
		}
	}
}

// ttyHelperEnv makes the test binary run [ttyHelper] instead of the tests.
const ttyHelperEnv = "DSHSIM_SPAWN_TTY_HELPER"

// tiocsti pushes "#" into the input of the controlling terminal (TIOCSTI,
// 0x5412): what a confined command would use to type a command into the
// user's shell, which runs it unconfined.
const tiocsti = `perl -e 'open(T, "<", "/dev/tty") or die "open /dev/tty: $!\n"; my $c = "#"; ioctl(T, 0x5412, $c) or die "TIOCSTI: $!\n"; print "injected\n"'`

// ttyHelper runs in a process whose controlling terminal is a pty (started
// by script(1)): it confines tiocsti with backend and prints the outcome.
func ttyHelper(backend string) int {
	if f, err := os.Open("/dev/tty"); err != nil {
		fmt.Println("helper: no controlling terminal:", err)
		return 0
	} else {
		f.Close()
	}
	launcher := os.Getenv(ttyHelperEnv + "_LAUNCHER")
	p, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{backend}, LauncherPath: launcher})
	if err != nil {
		fmt.Println("helper:", err)
		return 1
	}
	ws, _ := os.Getwd()
	res, err := Run(context.Background(), Request{Argv: bash(tiocsti), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: p})
	fmt.Printf("helper: exit %d err %v stdout %q stderr %q\n", res.ExitCode, err, res.Stdout.Text, res.Stderr.Text)
	return 0
}

// A confined command must not reach the controlling terminal of the process
// that spawned it: with it, TIOCSTI types input into the user's shell
// (CVE-2017-5226; bwrap's answer is --new-session, Node's detached spawn
// calls setsid). The test binary is re-run under script(1), which gives it a
// pty as controlling terminal, and confines a TIOCSTI there.
func TestConfinedCommandHasNoControllingTerminal(t *testing.T) {
	for _, tool := range []string{"script", "perl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			p := provider(t, backend) // skips when the backend cannot confine here
			ws := varTmpDir(t, "dshsim-ws-")
			cmd := exec.Command("script", "-qec", os.Args[0], "/dev/null")
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), ttyHelperEnv+"="+backend, ttyHelperEnv+"_LAUNCHER="+p.LauncherPath())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("script: %v\n%s", err, out)
			}
			if strings.Contains(string(out), "helper: no controlling terminal") {
				t.Skipf("script(1) gave no controlling terminal: %s", out)
			}
			if !strings.Contains(string(out), "helper: exit ") {
				t.Fatalf("helper did not report:\n%s", out)
			}
			if strings.Contains(string(out), "injected") {
				t.Errorf("the confined command typed into the controlling terminal:\n%s", out)
			}
		})
	}
}

// fdHelperEnv makes the test binary run [fdHelper] instead of the tests.
const fdHelperEnv = "DSHSIM_SPAWN_FD_HELPER"

// fdHelper runs with fd 3 inherited (not close-on-exec) from its parent, as
// a process can inherit descriptors from whatever started it: it confines a
// write to fd 3 with backend under read-only and reports the outcome.
func fdHelper(backend string) int {
	p, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{backend}, LauncherPath: os.Getenv(fdHelperEnv + "_LAUNCHER")})
	if err != nil {
		fmt.Println("helper:", err)
		return 1
	}
	ws, _ := os.Getwd()
	res, err := Run(context.Background(), Request{Argv: bash("echo escaped >&3"), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: p})
	fmt.Printf("helper: exit %d err %v stderr %q\n", res.ExitCode, err, res.Stderr.Text)
	return 0
}

// Descriptors the process inherited without close-on-exec (Go marks only its
// own) must not reach a confined command: neither bwrap nor Landlock checks
// an already open descriptor, so a read-only command wrote through one to a
// file outside the workspace. The test binary is re-run with fd 3 open for
// append on an outside file.
func TestInheritedDescriptorsDoNotReachTheCommand(t *testing.T) {
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			p := provider(t, backend) // skips when the backend cannot confine here
			ws := varTmpDir(t, "dshsim-ws-")
			outside := filepath.Join(varTmpDir(t, "dshsim-outside-"), "log")
			f, err := os.OpenFile(outside, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd := exec.Command(os.Args[0])
			cmd.Dir = ws
			cmd.ExtraFiles = []*os.File{f} // fd 3 in the helper, not close-on-exec there
			cmd.Env = append(os.Environ(), fdHelperEnv+"="+backend, fdHelperEnv+"_LAUNCHER="+p.LauncherPath())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "helper: exit ") {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			if b, _ := os.ReadFile(outside); len(b) != 0 {
				t.Errorf("the confined command wrote %q outside the workspace through an inherited descriptor (%s)", b, out)
			}
		})
	}
}

// The /proc/self/fd walk (the fallback when close_range is missing) marks an
// inherited-style descriptor close-on-exec.
func TestCloseOnExecListedMarksDescriptors(t *testing.T) {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Fatal("descriptor already close-on-exec")
	}
	if err := closeOnExecListed("/proc/self/fd"); err != nil {
		t.Fatal(err)
	}
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC == 0 {
		t.Error("descriptor still inherited by children")
	}
	if err := closeOnExecListed("/nonexistent/fd"); err == nil {
		t.Error("an unreadable descriptor list was accepted")
	}
}

// TestExtraFilesReachTheConfinedCommand passes a pipe as descriptor 3 through
// each backend (bwrap, the Landlock runner, the in-process launcher) and copies the streams to extra writers as they arrive.
func TestExtraFilesReachTheConfinedCommand(t *testing.T) {
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock, inproc.Backend} {
		t.Run(backend, func(t *testing.T) {
			p := confiner(t, backend)
			ws := varTmpDir(t, "dshsim-ws-")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var out, errOut strings.Builder
			proc, err := Start(context.Background(), Request{
				Argv: bash("echo via-fd3 >&3; echo out; echo err >&2"), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws},
				Confiner: p, ExtraFiles: []*os.File{w}, Stdout: &out, Stderr: &errOut,
			})
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(r)
			res, err := proc.Wait()
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("exit %d err %v stderr %q", res.ExitCode, err, res.Stderr.Text)
			}
			if string(got) != "via-fd3\n" {
				t.Errorf("descriptor 3 carried %q", got)
			}
			if out.String() != "out\n" || res.Stdout.Text != "out\n" || !strings.HasSuffix(errOut.String(), "err\n") {
				t.Errorf("copies: stdout %q (captured %q), stderr %q", out.String(), res.Stdout.Text, errOut.String())
			}
		})
	}
}

// TestHardenedRunsWithoutSecrets: a provider with Config.Harden starts the
// command without the secret variables of its environment (given or
// inherited); without Harden the command sees them.
func TestHardenedRunsWithoutSecrets(t *testing.T) {
	sandboxtest.RequireLandlock(t, 6)
	t.Setenv("DSHSIM_TEST_INHERITED_TOKEN", "inherited-secret")
	ws := varTmpDir(t, "dshsim-ws-")
	for _, harden := range []bool{false, true} {
		p, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{sandbox.BackendLandlock}, LauncherPath: sandboxtest.Runner(t), Harden: harden})
		if err != nil {
			t.Fatal(err)
		}
		for _, env := range [][]string{nil, {"PATH=" + os.Getenv("PATH"), "DSHSIM_TEST_API_KEY=given-secret", "KEEP=me"}} {
			res, err := Run(context.Background(), Request{Argv: []string{"env"}, Env: env, Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: p})
			if err != nil {
				t.Fatal(err)
			}
			out := res.Stdout.Text
			leaked := strings.Contains(out, "inherited-secret") || strings.Contains(out, "given-secret")
			if leaked == harden {
				t.Errorf("harden=%v, env given=%v: secret in the command's environment = %v:\n%s", harden, env != nil, leaked, out)
			}
			if env != nil && !strings.Contains(out, "KEEP=me\n") {
				t.Errorf("harden=%v: a plain variable is missing:\n%s", harden, out)
			}
		}
	}
}

// signalHelperEnv makes the test binary spawn `kill -HUP $$` and print how
// it ended.
const signalHelperEnv = "DSHSIM_SPAWN_SIGNAL_HELPER"

func signalHelper() int {
	res, err := Run(context.Background(), Request{Argv: []string{"/bin/sh", "-c", "kill -HUP $$; echo survived"}, Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: os.TempDir()}})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("signaled=%v signal=%s stdout=%q\n", res.Signaled, res.Signal, res.Stdout.Text)
	return 0
}

// TestIgnoredSignalsReachTheCommandAtDefault: a harness started with SIGHUP
// ignored (as nohup starts it) starts commands with SIGHUP at its default,
// as Node's spawn does, so `kill -HUP $$` ends the command by SIGHUP.
func TestIgnoredSignalsReachTheCommandAtDefault(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup here to start the helper with SIGHUP ignored")
	}
	cmd := exec.Command(nohup, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), signalHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if want := `signaled=true signal=SIGHUP stdout=""`; !strings.Contains(string(out), want) {
		t.Errorf("under nohup the command ended %s, want %s", out, want)
	}
}

func (confinerFunc) Sealed(seal.Token) {}
func (wrapAs) Sealed(seal.Token)       {}
func (grants) Sealed(seal.Token)       {}
