package chain_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/benchratio"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/internal/seal"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/stack"
)

// BenchmarkSpawnRatios measures every way of spawning /bin/true interleaved,
// round by round, so all of them see the same machine load, and reports the
// median of each as a ratio to the bare spawn of the same run
// ("<variant>-x"), plus the bare median in microseconds ("bare-µs"). One
// b.N iteration is one round (each variant once, shuffled per round). The
// ns/op of this benchmark is the cost of a round and is not meaningful alone.
// "bare-handoff" starts the bare command from another locked thread, without
// Landlock: the price of the thread handoff the in-process path pays.
//
// The runner rows: "go-empty" (an empty static Go binary: Go's start-up and
// exit), "go-exec" (a Go binary that only execs /bin/true: the floor of any Go
// runner), "runner-rules" (ours up to a failing exec), "runner" (ours), and,
// when [cRunnerEnv] names upstream's C runner, "c-runner" and "c-runner-rules"
// (the same two runs through it) plus "runner/c-runner", "inproc/c-runner",
// "inproc-reuse/c-runner", "stack-landlock/c-runner",
// "stack-spawn/c-runner-spawn" and "stack-runner-spawn/c-runner-spawn", the
// ratios of ours to it in the same run.
// Without the variable the C rows are reported skipped.
//
// The stack rows are on a Landlock host (the stack composed with Landlock
// as its only backend, as on a host without a usable bwrap).
// "stack-landlock" is the stack's default confinement of a start, as every
// other row starts /bin/true: the stack's own confiner confines the call
// (sandbox.Validate, then the in-process path on a reused thread) and
// starts it; "stack-landlock/c-runner" is the headline. The "-spawn" rows
// add the executor the stack's bash runs every command through (package
// sandbox/spawn: a new session, captured streams, close-on-exec, the
// subreaper's sweep, the report), the same for every backend: "spawn-bare"
// unconfined, "stack-spawn" through the stack's confiner,
// "stack-runner-spawn" through the runner (the configuration asking for
// it, the default before) and "c-runner-spawn" through upstream's C runner
// wrapping argv as our runner does; "stack-spawn/c-runner-spawn" compares
// the two confinements inside the same executor.
func BenchmarkSpawnRatios(b *testing.B) {
	ws := sandboxtest.TempDir(b, "dshsim-bench-ws-")
	policy := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}
	bin := benchBinaries(b)
	cRunner, cSkip, err := cRunnerFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	sandboxtest.RequireLandlock(b, 1)
	l, err := inproc.New()
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	stackConfiner, runnerConfiner := stackOnLandlock(b, ws, bin.runner)
	out := sandboxtest.TempDir(b, "dshsim-bench-out-")
	// The stack's confinement of a start: c confines the call (the one
	// check, then the in-process path's Start), /bin/true starts and is
	// waited for, as every other row starts it.
	started := func(c spawn.Confiner) func() error {
		return func() error {
			w, err := c.Confine(context.Background(), []string{"/bin/true"}, policy)
			if err != nil {
				return err
			}
			cmd := exec.Command(w.Argv[0], w.Argv[1:]...)
			start := cmd.Start
			if w.Start != nil {
				start = func() error { return w.Start(cmd) }
			}
			if err := start(); err != nil {
				return err
			}
			return cmd.Wait()
		}
	}
	// The executor as the stack's bash uses it: spawn.Run of /bin/true,
	// confined by c (nil: unconfined, danger-full-access).
	spawned := func(c spawn.Confiner) func() error {
		p := policy
		if c == nil {
			p.Mode = sandbox.DangerFullAccess
		}
		return func() error {
			res, err := spawn.Run(context.Background(), spawn.Request{Argv: []string{"/bin/true"}, Policy: p, Confiner: c, OutputDir: out})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr.Text)
			}
			return err
		}
	}
	// A locked, unrestricted worker thread starting the command: the cost of
	// the thread handoff alone, without Landlock.
	handoff := make(chan chan error)
	var toStart *exec.Cmd
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for done := range handoff {
			done <- toStart.Start()
		}
	}()
	defer close(handoff)
	type variant struct {
		name string
		fn   func() error
	}
	cmd := func(argv ...string) func() error {
		return func() error { return exec.Command(argv[0], argv[1:]...).Run() }
	}
	// Start-up, ABI query, ruleset, restriction, then a failing exec: exit 125.
	rulesOnly := func(runner string) func() error {
		argv := sandbox.Wrap([]string{runner}, sandbox.LandlockArgs(policy), []string{"/nonexistent/dshsim"})
		return func() error {
			err := exec.Command(argv[0], argv[1:]...).Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 125 {
				return nil
			}
			return fmt.Errorf("rules-only run of %s: %v, want exit 125", runner, err)
		}
	}
	variants := []variant{
		{"bare", cmd("/bin/true")},
		{"inproc", func() error {
			c := exec.Command("/bin/true")
			if err := l.Start(c, policy); err != nil {
				return err
			}
			return c.Wait()
		}},
		{"bare-handoff", func() error {
			toStart = exec.Command("/bin/true")
			done := make(chan error)
			handoff <- done
			if err := <-done; err != nil {
				return err
			}
			return toStart.Wait()
		}},
		{"go-empty", cmd(bin.empty)},
		{"go-exec", cmd(bin.goExec)},
		{"runner-rules", rulesOnly(bin.runner)},
		{"runner", cmd(sandbox.Wrap([]string{bin.runner}, sandbox.LandlockArgs(policy), []string{"/bin/true"})...)},
		{"runner-naive", cmd(bin.naive, ws, "--", "/bin/true")},
		{"stack-landlock", started(stackConfiner)},
		{"spawn-bare", spawned(nil)},
		{"stack-spawn", spawned(stackConfiner)},
		{"stack-runner-spawn", spawned(runnerConfiner)},
	}
	if cRunner != "" {
		variants = append(variants,
			variant{"c-runner-rules", rulesOnly(cRunner)},
			variant{"c-runner", cmd(sandbox.Wrap([]string{cRunner}, sandbox.LandlockArgs(policy), []string{"/bin/true"})...)},
			variant{"c-runner-spawn", spawned(cRunnerConfiner(cRunner))})
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		// bwrap binds the workspace through descriptor 4 (--bind-fd), as the
		// provider hands it the checked directory.
		ws, err := os.Open(policy.WorkspaceRoot)
		if err != nil {
			b.Fatal(err)
		}
		defer ws.Close()
		argv := sandbox.Wrap([]string{"bwrap"}, sandbox.BwrapArgs(policy), []string{"/bin/true"})
		variants = append(variants, variant{"bwrap", func() error {
			c := exec.Command(argv[0], argv[1:]...)
			c.ExtraFiles = []*os.File{nil, ws}
			return c.Run()
		}})
	}
	ratios := make([]benchratio.Variant, len(variants))
	for i, v := range variants {
		ratios[i] = benchratio.Variant{Name: v.name, Run: v.fn}
	}
	medians := benchratio.Run(b, ratios)
	if cRunner == "" {
		b.Log(cSkip)
		return
	}
	// Ours over upstream's C runner: the runner binary, the in-process path
	// that confines a Go caller's child without one, and the stack's default
	// spawn (and the same spawn through the runner, the old default).
	for _, ratio := range [][2]string{{"runner", "c-runner"}, {"inproc", "c-runner"}, {"stack-landlock", "c-runner"},
		{"stack-spawn", "c-runner-spawn"}, {"stack-runner-spawn", "c-runner-spawn"}} {
		name := ratio[0] + "/" + ratio[1]
		r := medians[ratio[0]] / medians[ratio[1]]
		b.ReportMetric(r, name)
		if testing.Verbose() {
			fmt.Printf("%-33s %.2fx  (ours / upstream's C runner, medians of this run)\n", name, r)
		}
	}
}

// cRunnerEnv names the environment variable holding the path of upstream's C
// landlock-run for the spawn benchmark's c-runner rows (`make
// bench-spawn-c` fetches it from npm into a temp dir).
const cRunnerEnv = "DSHSIM_C_RUNNER"

// cRunnerFromEnv returns the C runner's path from [cRunnerEnv], or "" and
// the reason its rows are skipped. A set variable that names no executable
// file is an error, not a skip.
func cRunnerFromEnv() (path, skip string, err error) {
	path = os.Getenv(cRunnerEnv)
	if path == "" {
		return "", "c-runner: skipped: " + cRunnerEnv + " is not set (the path of upstream's C landlock-run; `make bench-spawn-c` fetches it)", nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("%s=%s: %v", cRunnerEnv, path, err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", "", fmt.Errorf("%s=%s: not an executable file (mode %v)", cRunnerEnv, path, st.Mode())
	}
	return path, "", nil
}

// TestCRunnerFromEnv: an unset variable skips the C rows with the reason; a
// set one must name an executable file, or the benchmark fails naming it.
func TestCRunnerFromEnv(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "exe"), filepath.Join(dir, "plain")
	for f, mode := range map[string]os.FileMode{exe: 0o755, plain: 0o644} {
		if err := os.WriteFile(f, nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, value, wantPath, wantSkip, wantErr string
	}{
		{name: "unset skips with the reason", value: "", wantSkip: "c-runner: skipped: " + cRunnerEnv + " is not set"},
		{name: "an executable file is used", value: exe, wantPath: exe},
		{name: "a missing file is an error", value: filepath.Join(dir, "missing"), wantErr: "no such file"},
		{name: "a directory is an error", value: dir, wantErr: "not an executable file"},
		{name: "a file without x bits is an error", value: plain, wantErr: "not an executable file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(cRunnerEnv, tc.value)
			path, skip, err := cRunnerFromEnv()
			if path != tc.wantPath || !strings.HasPrefix(skip, tc.wantSkip) || (tc.wantSkip == "") != (skip == "") {
				t.Errorf("path %q, skip %q; want %q, skip starting %q", path, skip, tc.wantPath, tc.wantSkip)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), cRunnerEnv)) {
				t.Errorf("err = %v, want one naming %s and containing %q", err, cRunnerEnv, tc.wantErr)
			}
		})
	}
}

// stackOnLandlock composes a real stack on a Landlock host (Landlock its
// only backend, the runner runner its fallback) and returns the confiner its
// bash uses, and the same chain asking for the runner.
func stackOnLandlock(b *testing.B, ws, runner string) (spawn.Confiner, spawn.Confiner) {
	log := sessiontest.New(b, "0b7c2a52-5a8e-4d8e-9a55-00000000be9c", ws)
	s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalNever,
		SandboxConfig: stack.SandboxConfig{
			SandboxChain: []string{sandbox.BackendLandlock},
			LauncherPath: runner,
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if backend, _ := s.Backend(); backend != inproc.Backend {
		b.Fatalf("the stack on a Landlock host confines with %q, want %q", backend, inproc.Backend)
	}
	r, err := chain.New(chain.Config{Runner: true, Sandbox: sandbox.Config{Chain: []string{sandbox.BackendLandlock}, LauncherPath: runner}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return s.Confiner(), r
}

// cRunnerConfiner confines argv with upstream's C runner at path, wrapping
// it as the provider wraps argv in ours (the same flags: upstream's runner
// reads them; no --rw-inode pin, which is ours): for the executor rows.
type cRunnerConfiner string

func (c cRunnerConfiner) Confine(_ context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
	p, err := sandbox.Validate(argv, p)
	if err != nil {
		return sandbox.ConfinedArgv{}, err
	}
	p.WorkspaceID = sandbox.FileID{}
	d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	return sandbox.ConfinedArgv{Argv: sandbox.Wrap([]string{string(c)}, sandbox.LandlockArgs(p), argv), Backend: sandbox.BackendLandlock, Enforcement: sandbox.Full,
		DenialSignatures: d.DenialSignatures, RunnerFailureRules: d.RunnerFailureRules, Policy: p}, nil
}

func (cRunnerConfiner) Sealed(seal.Token) {}
