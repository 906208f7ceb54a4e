package noderuntime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
)

// TestProgramsRunConfined runs programs under each real backend and checks
// the host's files afterwards: Node's own fs and a child process are held
// to the call's policy.
func TestProgramsRunConfined(t *testing.T) {
	r := newRuntime(t, Config{})
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
			t.Run(backend+"/"+string(mode), func(t *testing.T) {
				p := provider(t, backend)
				ws, outside := varTmpDir(t, "dshsim-code-ws-"), varTmpDir(t, "dshsim-code-out-")
				inFile, outFile, outChild := filepath.Join(ws, "in.txt"), filepath.Join(outside, "fs.txt"), filepath.Join(outside, "child.txt")
				code := `const fs = await import('node:fs'); const cp = await import('node:child_process');
const tryWrite = (p: string) => { try { fs.writeFileSync(p, 'x'); return 'wrote'; } catch (e: any) { return e.code; } };
const child = cp.spawnSync('sh', ['-c', 'echo x > ` + outChild + `'], {encoding: 'utf8'});
return {cwd: process.cwd(), inside: tryWrite('` + inFile + `'), outside: tryWrite('` + outFile + `'), child: child.status};`
				res, err := runWithin(t, r, context.Background(), Request{Code: code, Policy: sandbox.Policy{Mode: mode, WorkspaceRoot: ws}, Confiner: p})
				if err != nil {
					t.Fatal(err)
				}
				if res.Error != nil || res.Backend != backend {
					t.Fatalf("failure %q backend %q logs %q", failureOf(res), res.Backend, res.Logs)
				}
				denied := `"EROFS"`
				if backend == sandbox.BackendLandlock {
					denied = `"EACCES"`
				}
				inside := denied
				if mode == sandbox.WorkspaceWrite {
					inside = `"wrote"`
				}
				want := `{"cwd":"` + ws + `","inside":` + inside + `,"outside":` + denied + `,"child":`
				if !strings.HasPrefix(string(res.Value), want) || strings.HasSuffix(string(res.Value), `"child":0}`) {
					t.Errorf("value %s, want %s<non-zero>}", res.Value, want)
				}
				for _, f := range []string{outFile, outChild} {
					if _, err := os.Stat(f); err == nil {
						t.Errorf("%s was written on the host", f)
					}
				}
				if _, err := os.Stat(inFile); (err == nil) != (mode == sandbox.WorkspaceWrite) {
					t.Errorf("%s on the host: %v", inFile, err)
				}
			})
		}
	}
}

// TestNoBackendFailsClosed: a confined policy without a usable backend (or
// without a confiner) refuses the run with SANDBOX_UNAVAILABLE; node never
// starts.
func TestNoBackendFailsClosed(t *testing.T) {
	node, marker := fakeNode(t)
	r := newRuntime(t, Config{Node: node})
	none, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	ws := varTmpDir(t, "dshsim-code-ws-")
	for name, c := range map[string]Request{
		"no backend":  {Code: "return 1;", Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}, Confiner: none},
		"no confiner": {Code: "return 1;", Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}},
	} {
		res, err := runWithin(t, r, context.Background(), c)
		var ue *sandbox.UnavailableError
		if !errors.As(err, &ue) || ue.Code() != sandbox.ErrorCode {
			t.Errorf("%s: result %+v error %v, want SANDBOX_UNAVAILABLE", name, res, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("node was started without confinement")
	}
}

// TestRunnerFailureBeforeNodeFailsClosed: a runner that fails before it
// runs node is a confinement failure, not a program outcome.
func TestRunnerFailureBeforeNodeFailsClosed(t *testing.T) {
	dir := t.TempDir()
	runner := filepath.Join(dir, "runner")
	if err := os.WriteFile(runner, []byte("#!/bin/sh\necho 'fake-runner: cannot set up the sandbox' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", RunnerCommand: []string{runner}, RunnerFailureSignatures: []string{"fake-runner:"}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, Config{})
	_, err = runWithin(t, r, context.Background(), Request{Code: "return 1;", Policy: sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: varTmpDir(t, "dshsim-code-ws-")}, Confiner: p})
	var ue *sandbox.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(ue.Error(), "Runner failure: fake-runner: cannot set up the sandbox") {
		t.Errorf("error %v, want SANDBOX_UNAVAILABLE with the runner's line", err)
	}
}
