package spawn

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/internal/seal"
)

// limitsBackends are the ways a call runs: unconfined, and under each
// backend (the argv backends get their limits from spawn's own stop, the
// in-process path from its start).
var limitsBackends = []string{string(sandbox.DangerFullAccess), sandbox.BackendBwrap, sandbox.BackendLandlock, inproc.Backend}

// limitedRun runs script under backend in workspace-write (or unconfined)
// with limits l.
func limitedRun(t *testing.T, backend, ws string, l sandbox.Limits, script string) Result {
	t.Helper()
	req := Request{Argv: bash(script), Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws, Limits: l}, OutputDir: t.TempDir()}
	if backend == string(sandbox.DangerFullAccess) {
		req.Policy.Mode = sandbox.DangerFullAccess
	} else {
		req.Confiner = confiner(t, backend)
	}
	res, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestLimitsBoundEveryBackend: a call's limits are set on its command before
// it runs, whatever confines it, and stop it: a CPU loop past the CPU
// bound, a file written past the file size bound, an allocation past the
// memory bound; each result names the bound. The process bound is set as
// asked (root is not bound by it, so its effect is not shown here).
func TestLimitsBoundEveryBackend(t *testing.T) {
	if d, err := delegation(); err == nil {
		t.Skipf("this host delegates the cgroup %s: bounded calls run in cgroups of their own (TestCgroupGuest holds that path)", d.Dir)
	}
	for _, backend := range limitsBackends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ws := varTmpDir(t, "dshsim-limits-")
			for _, tc := range []struct {
				name   string
				l      sandbox.Limits
				script string
				bound  string
			}{
				{"cpu", sandbox.Limits{CPU: 1}, "while :; do :; done", "the CPU time bound (1 s, RLIMIT_CPU)"},
				{"file size", sandbox.Limits{FileSize: 4096}, "head -c 100000 /dev/zero > big", "the file size bound (4096 bytes, RLIMIT_FSIZE)"},
				{"memory", sandbox.Limits{Memory: 256 << 20}, "dd bs=1G count=1 if=/dev/zero of=/dev/null", "the memory bound (268435456 bytes, RLIMIT_AS)"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res := limitedRun(t, backend, ws, tc.l, tc.script)
					if res.Bound != tc.bound {
						t.Errorf("bound %q, want %q (exit %d, signal %q, stderr %q)", res.Bound, tc.bound, res.ExitCode, res.Signal, res.Stderr.Text)
					}
					if res.Sandbox != nil && res.Sandbox.Facts().Bound != tc.bound {
						t.Errorf("the sandbox facts name the bound %q, want %q", res.Sandbox.Facts().Bound, tc.bound)
					}
				})
			}
			res := limitedRun(t, backend, ws, sandbox.Limits{Processes: 4242, Memory: 1 << 40, FileSize: 1 << 40, CPU: 4242}, "cat /proc/self/limits")
			for _, want := range []string{"Max processes             4242                 4242", "Max address space         1099511627776        1099511627776",
				"Max file size             1099511627776        1099511627776", "Max cpu time              4242                 4243"} {
				if !strings.Contains(res.Stdout.Text, want) {
					t.Errorf("the command's limits lack %q:\n%s", want, res.Stdout.Text)
				}
			}
		})
	}
}

// TestAConfinerThatCannotSetLimitsIsRefused: a confiner that starts the
// command itself without saying it sets the limits gets no call with
// limits: spawn refuses it rather than run the command unbounded.
func TestAConfinerThatCannotSetLimitsIsRefused(t *testing.T) {
	ws := varTmpDir(t, "dshsim-limits-")
	c := startingConfiner{}
	_, err := Run(context.Background(), Request{Argv: bash("true"), Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws, Limits: sandbox.Limits{CPU: 1}}, Confiner: c, OutputDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "cannot set the call's limits") {
		t.Errorf("Run = %v, want a refusal", err)
	}
}

// startingConfiner starts the command itself (unconfined: the test checks
// only that spawn refuses it when limits are asked for).
type startingConfiner struct{}

func (startingConfiner) Confine(_ context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
	return sandbox.ConfinedArgv{Argv: argv, Backend: "starting", Policy: p, Start: func(cmd *exec.Cmd) error { return cmd.Start() }}, nil
}

func (startingConfiner) Sealed(seal.Token) {}
