package code

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/dshsim/dshsim/harness/benchratio"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// BenchmarkEmptyProgramRatio measures an empty program's start-to-result
// against a bare spawn of node with an empty -e script, in the same run
// (harness/benchratio: interleaved rounds, medians, ratios to the bare
// spawn): the runtime alone, run_code's body unconfined, and run_code under
// Landlock and bwrap (workspace-write).
//
//	go test ./tools/code -run '^$' -bench EmptyProgramRatio -benchtime 40x -v
func BenchmarkEmptyProgramRatio(b *testing.B) {
	rt, err := noderuntime.New(noderuntime.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ws := sandboxtest.TempDir(b, "dshsim-bench-code-")
	runner := sandboxtest.Runner(b)
	runCode := func(mode sandbox.Mode, backend string) func() error {
		var confiner *sandbox.Provider
		if backend != "" {
			if confiner, err = sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{backend}, LauncherPath: runner}); err != nil {
				b.Fatal(err)
			}
		}
		regs, err := New(Config{Deps: Deps{Registry: pipeline.NewRegistry(), Runtime: rt, Confiner: confiner,
			Policy: func(*pipeline.Call) (sandbox.Policy, error) {
				return sandbox.Policy{Mode: mode, WorkspaceRoot: ws}, nil
			}}})
		if err != nil {
			b.Fatal(err)
		}
		def := regs[0].Def
		return func() error {
			out, err := def.Run(context.Background(), pipeline.NewCall("b", Name, args("", "empty program"), nil, nil))
			if err != nil || out.Content[0].Text != NoOutput {
				return fmt.Errorf("%s/%s: %v %+v", mode, backend, err, out)
			}
			return nil
		}
	}
	variants := []benchratio.Variant{
		{Name: "node", Run: func() error { return exec.Command(rt.Node(), "-e", "").Run() }},
		{Name: "runtime", Run: func() error {
			res, err := rt.Run(context.Background(), noderuntime.Request{Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
			if err != nil || res.Error != nil {
				return fmt.Errorf("%v %+v", err, res.Error)
			}
			return nil
		}},
		{Name: "run_code", Run: runCode(sandbox.DangerFullAccess, "")},
		{Name: "run_code-landlock", Run: runCode(sandbox.WorkspaceWrite, sandbox.BackendLandlock)},
	}
	if sandbox.ProbeBwrap(context.Background()) {
		variants = append(variants, benchratio.Variant{Name: "run_code-bwrap", Run: runCode(sandbox.WorkspaceWrite, sandbox.BackendBwrap)})
	}
	benchratio.Run(b, variants)
}
