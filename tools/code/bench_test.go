package code

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// BenchmarkEmptyProgramRatio measures an empty program's start-to-result
// against a bare spawn of node with an empty -e script, in the same run:
// interleaved rounds, the median of each variant, reported as a ratio to
// the bare spawn.
//
//	go test ./tools/code -run '^$' -bench EmptyProgramRatio -benchtime 40x -v
func BenchmarkEmptyProgramRatio(b *testing.B) {
	rt, err := noderuntime.New(noderuntime.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ws := sandboxtest.TempDir(b, "dshsim-bench-code-")
	runner := sandboxtest.Runner(b)
	reg := pipeline.NewRegistry()
	runCode := func(mode sandbox.Mode, backend string) func() error {
		var confiner *sandbox.Provider
		if backend != "" {
			if confiner, err = sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{backend}, LauncherPath: runner}); err != nil {
				b.Fatal(err)
			}
		}
		tl, err := New(Config{}, Deps{Registry: reg, Runtime: rt, Confiner: confiner,
			Policy: func(*pipeline.Call) (sandbox.Policy, error) {
				return sandbox.Policy{Mode: mode, WorkspaceRoot: ws}, nil
			}})
		if err != nil {
			b.Fatal(err)
		}
		def := tl.Definition()
		return func() error {
			out, err := def.Run(context.Background(), pipeline.NewCall("b", Name, args("", "empty program"), nil, nil))
			if err != nil || out.Content[0].Text != NoOutput {
				return fmt.Errorf("%s/%s: %v %+v", mode, backend, err, out)
			}
			return nil
		}
	}
	type variant struct {
		name, metric string
		fn           func() error
	}
	variants := []variant{
		{"bare node -e ''", "", func() error { return exec.Command(rt.Node(), "-e", "").Run() }},
		{"runtime, unconfined", "runtime-x", func() error {
			res, err := rt.Run(context.Background(), noderuntime.Request{Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}})
			if err != nil || res.Error != nil {
				return fmt.Errorf("%v %+v", err, res.Error)
			}
			return nil
		}},
		{"run_code, unconfined", "run_code-x", runCode(sandbox.DangerFullAccess, "")},
		{"run_code, landlock", "landlock-x", runCode(sandbox.WorkspaceWrite, sandbox.BackendLandlock)},
	}
	if sandbox.ProbeBwrap(context.Background()) {
		variants = append(variants, variant{"run_code, bwrap", "bwrap-x", runCode(sandbox.WorkspaceWrite, sandbox.BackendBwrap)})
	}
	samples := make([][]time.Duration, len(variants))
	round := 0
	for b.Loop() {
		for k := range variants {
			i := (k + round) % len(variants)
			start := time.Now()
			if err := variants[i].fn(); err != nil {
				b.Fatalf("%s: %v", variants[i].name, err)
			}
			samples[i] = append(samples[i], time.Since(start))
		}
		round++
	}
	median := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2])
	}
	bare := median(samples[0])
	b.ReportMetric(bare/1e6, "bare-ms")
	for i, v := range variants[1:] {
		b.ReportMetric(median(samples[i+1])/bare, v.metric)
	}
	if testing.Verbose() {
		for i, v := range variants {
			fmt.Printf("%-22s median %7.1f ms  ratio %.2fx  (%d samples)\n", v.name, median(samples[i])/1e6, median(samples[i])/bare, len(samples[i]))
		}
	}
}
