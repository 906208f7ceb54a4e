package chain_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

var (
	buildOnce sync.Once
	benchDir  string
	bins      benchBins
	buildErr  error
)

// benchBins are the binaries the spawn benchmarks run, built once per test
// binary run into a temp dir with the runner's flags (static, stripped).
type benchBins struct {
	// runner is landlock-run.
	runner string
	// empty is an empty Go program: Go's runtime start-up and exit alone.
	empty string
	// goExec is a Go program that only execs /bin/true, from an init
	// function as the runner does: the least any Go runner can cost (Go's
	// start-up, then an exec from a Go process).
	goExec string
	// naive is the go-landlock runner of testdata/naiverunner.
	naive string
}

// goExecSource is goExec's program.
const goExecSource = `package main

import "syscall"

func init() {
	syscall.Exec("/bin/true", []string{"/bin/true"}, syscall.Environ())
	syscall.Exit(127)
}

func main() {}
`

// benchBinaries builds the benchmark binaries once per test binary run.
func benchBinaries(b *testing.B) benchBins {
	buildOnce.Do(func() {
		benchDir, buildErr = os.MkdirTemp("", "dshsim-bench-")
		if buildErr != nil {
			return
		}
		if bins.runner, buildErr = sandboxtest.BuildRunner("", benchDir); buildErr != nil {
			return
		}
		for _, p := range []struct {
			bin  *string
			name string
			src  string
		}{
			{&bins.empty, "empty-go", "package main\n\nfunc main() {}\n"},
			{&bins.goExec, "go-exec", goExecSource},
		} {
			src := filepath.Join(benchDir, p.name+"-src")
			if buildErr = os.Mkdir(src, 0o755); buildErr != nil {
				return
			}
			if buildErr = os.WriteFile(filepath.Join(src, "main.go"), []byte(p.src), 0o644); buildErr != nil {
				return
			}
			if *p.bin, buildErr = sandboxtest.Build(src, benchDir, p.name, "./main.go"); buildErr != nil {
				return
			}
		}
		bins.naive, buildErr = sandboxtest.Build("", benchDir, "naive-runner", "./testdata/naiverunner")
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return bins
}

func run(b *testing.B, argv ...string) {
	if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
		b.Fatalf("%q: %v", argv, err)
	}
}

// BenchmarkSpawnTrue spawns /bin/true with exec.Command(...).Run() in every
// way the stack can; compare each against "bare" from the same run
// (benchstat, or the ratio of ns/op). go-empty and the runner-* rows split
// the runner's cost: runtime start-up of an empty static Go binary, start-up
// plus ABI query, ruleset and restriction (then a failing exec), and the full
// confined exec. BenchmarkSpawnRatios measures the same interleaved and
// reports ratios; prefer it on a loaded machine.
func BenchmarkSpawnTrue(b *testing.B) {
	ws := sandboxtest.TempDir(b, "dshsim-bench-ws-")
	policy := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			run(b, "/bin/true")
		}
	})
	for _, v := range []struct {
		name string
		opts inproc.Options
	}{{"inproc", inproc.Options{}}} {
		b.Run(v.name, func(b *testing.B) {
			sandboxtest.RequireLandlock(b, 1)
			l, err := inproc.NewWithOptions(v.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := l.Start(cmd, policy); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("bwrap", func(b *testing.B) {
		if _, err := exec.LookPath("bwrap"); err != nil {
			b.Skip("no bwrap")
		}
		argv := sandbox.Wrap([]string{"bwrap"}, sandbox.BwrapArgs(policy), []string{"/bin/true"})
		for b.Loop() {
			run(b, argv...)
		}
	})
	b.Run("go-empty", func(b *testing.B) {
		empty := benchBinaries(b).empty
		for b.Loop() {
			run(b, empty)
		}
	})
	b.Run("runner-rules", func(b *testing.B) {
		runner := benchBinaries(b).runner
		argv := sandbox.Wrap([]string{runner}, sandbox.LandlockArgs(policy), []string{"/nonexistent/dshsim"})
		for b.Loop() {
			// Start-up, ABI query, ruleset, restriction, a failing exec: 125.
			exec.Command(argv[0], argv[1:]...).Run()
		}
	})
	b.Run("runner", func(b *testing.B) {
		runner := benchBinaries(b).runner
		argv := sandbox.Wrap([]string{runner}, sandbox.LandlockArgs(policy), []string{"/bin/true"})
		for b.Loop() {
			run(b, argv...)
		}
	})
}
