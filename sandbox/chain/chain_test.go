package chain_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

func TestMain(m *testing.M) {
	code := sandboxtest.Main(m)
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func newConfiner(t *testing.T, cfg chain.Config) *chain.Confiner {
	t.Helper()
	c, err := chain.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// noBwrap is the platform chain on a host without a usable bwrap.
var noBwrap = sandbox.Probes{Bwrap: func(context.Context) bool { return false }}

// runConfined runs sh -c script confined by c under policy p through spawn.
func runConfined(t *testing.T, c spawn.Confiner, p sandbox.Policy, script string) (spawn.Result, error) {
	t.Helper()
	return spawn.Run(context.Background(), spawn.Request{Argv: []string{"sh", "-c", script}, Policy: p, Confiner: c, OutputDir: t.TempDir()})
}

// TestLandlockRunsInProcess: on a host without bwrap the chain selects
// Landlock and confines in this process (backend landlock-inproc, no
// fallback, argv as given): the workspace is written, outside is denied
// with Landlock's dialect, the report names the path; the runner binary
// need not exist (the in-process probe makes Landlock usable), while the
// argv contract still wraps argv in the runner.
func TestLandlockRunsInProcess(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	missing := filepath.Join(t.TempDir(), "no-landlock-run")
	c := newConfiner(t, chain.Config{Sandbox: sandbox.Config{LauncherPath: missing, Probes: noBwrap}})
	ws, outside := sandboxtest.TempDir(t, "dshsim-chain-ws-"), sandboxtest.TempDir(t, "dshsim-chain-out-")
	p := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}
	if b, enf := c.Selected(); b != inproc.Backend || enf == "" {
		t.Fatalf("Selected() = %q %q, want %s", b, enf, inproc.Backend)
	}
	res, err := runConfined(t, c, p, "echo x > "+filepath.Join(ws, "in")+" && echo y > "+filepath.Join(outside, "out"))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Sandbox
	if r == nil || r.Backend != inproc.Backend || r.Fallback != "" || !r.Denied || r.Mode != sandbox.WorkspaceWrite || len(r.Ungoverned) == 0 {
		t.Errorf("report %+v, want landlock-inproc, denied, no fallback, Landlock's Ungoverned", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "in")); err != nil {
		t.Errorf("the workspace write did not land: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "out")); err == nil {
		t.Error("the outside write landed")
	}
	if f := r.Facts(); f.Backend != inproc.Backend || f.Fallback != "" {
		t.Errorf("facts %+v", f)
	}
	wrapped, err := c.Provider().Confine(context.Background(), []string{"true"}, p)
	if err != nil || wrapped.Argv[0] != missing || wrapped.Start != nil {
		t.Errorf("the argv contract: %q, start %v, %v; want the runner %s", wrapped.Argv, wrapped.Start != nil, err, missing)
	}
}

// TestRunnerFallback: the runner confines a Landlock call, with the reason
// in the report and the facts, when the configuration asks for it, and when
// the in-process path cannot be used (hardened below ABI 6: the launcher
// refuses, and the runner, probed instead, then fails closed on the call).
func TestRunnerFallback(t *testing.T) {
	sandboxtest.RequireLandlock(t, 5)
	runner := sandboxtest.Runner(t)
	ws := sandboxtest.TempDir(t, "dshsim-chain-ws-")
	p := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}
	t.Run("configured", func(t *testing.T) {
		c := newConfiner(t, chain.Config{Runner: true, Sandbox: sandbox.Config{Chain: []string{sandbox.BackendLandlock}, LauncherPath: runner}})
		res, err := runConfined(t, c, p, "echo x > "+filepath.Join(ws, "configured"))
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Sandbox; r.Backend != sandbox.BackendLandlock || r.Fallback != chain.RunnerConfigured || res.Argv[0] != runner {
			t.Errorf("report %+v argv %q, want the runner with the configured reason", r, res.Argv)
		}
		if f := res.Sandbox.Facts(); f.Fallback != chain.RunnerConfigured || !strings.Contains(string(f.JSON()), `"fallback":"`+chain.RunnerConfigured+`"`) {
			t.Errorf("facts %s lack the fallback", f.JSON())
		}
		if c.Fallback() != chain.RunnerConfigured {
			t.Errorf("Fallback() = %q", c.Fallback())
		}
	})
	t.Run("in-process unusable", func(t *testing.T) {
		c := newConfiner(t, chain.Config{Sandbox: sandbox.Config{Chain: []string{sandbox.BackendLandlock}, LauncherPath: runner, LandlockABICap: 5, Harden: true}})
		w, err := c.Confine(context.Background(), []string{"true"}, p)
		if err != nil {
			t.Fatal(err)
		}
		if w.Backend != sandbox.BackendLandlock || !strings.Contains(w.Fallback, "the in-process path cannot be used in this process: inproc: hardening: --scope needs Landlock ABI 6") {
			t.Errorf("backend %q fallback %q", w.Backend, w.Fallback)
		}
		_, err = runConfined(t, c, p, "echo ran > "+filepath.Join(ws, "hardened"))
		var ue *sandbox.UnavailableError
		if !errors.As(err, &ue) || !strings.Contains(ue.Detail, "--scope needs Landlock ABI 6") {
			t.Errorf("the runner's call: %v, want it to fail closed", err)
		}
		if _, err := os.Stat(filepath.Join(ws, "hardened")); err == nil {
			t.Error("the command ran")
		}
	})
}

// TestPartialNoticeOnTheDefaultPath: capped below ABI 5, a call on the
// default path reports partial enforcement and its stderr starts with the
// runner's partial notice, as a run through the runner shows it (a
// recording of a partial Landlock run shows the notice to the model); the
// command's own exit is not a runner failure.
func TestPartialNoticeOnTheDefaultPath(t *testing.T) {
	sandboxtest.RequireLandlock(t, 3)
	runner := sandboxtest.Runner(t)
	ws := sandboxtest.TempDir(t, "dshsim-chain-ws-")
	p := sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}
	var stderr [2]string
	for i, useRunner := range []bool{false, true} {
		c := newConfiner(t, chain.Config{Runner: useRunner, Sandbox: sandbox.Config{Chain: []string{sandbox.BackendLandlock}, LauncherPath: runner, LandlockABICap: 3}})
		res, err := runConfined(t, c, p, "false")
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Sandbox; r.Enforcement != sandbox.Partial || r.RunnerFailed || r.Denied || res.ExitCode != 1 {
			t.Errorf("runner %v: report %+v exit %d", useRunner, r, res.ExitCode)
		}
		stderr[i] = res.Stderr.Text
	}
	if want := sandbox.LandlockPartialNotice + "\n"; stderr[0] != want || stderr[1] != want {
		t.Errorf("stderr in-process %q, runner %q; want both %q", stderr[0], stderr[1], want)
	}
}

// TestOtherBackendsAsTheProvider: a chain that selects bwrap confines as
// the provider does (argv wrapped in bwrap, no fallback).
func TestOtherBackendsAsTheProvider(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	c := newConfiner(t, chain.Config{Sandbox: sandbox.Config{Chain: []string{sandbox.BackendBwrap}}})
	ws := sandboxtest.TempDir(t, "dshsim-chain-ws-")
	w, err := c.Confine(context.Background(), []string{"true"}, sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws})
	if err != nil || w.Backend != sandbox.BackendBwrap || w.Argv[0] != "bwrap" || w.Start != nil || w.Fallback != "" {
		t.Errorf("%+v %v", w, err)
	}
	if b, _ := c.Selected(); b != sandbox.BackendBwrap || c.Fallback() != "" {
		t.Errorf("Selected %q, Fallback %q", b, c.Fallback())
	}
}
