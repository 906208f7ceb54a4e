package inproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

var (
	buildOnce           sync.Once
	benchDir            string
	runnerBin, emptyBin string
	naiveBin            string
	buildErr            error
)

// benchBinaries builds landlock-run and an empty Go program (same flags:
// static, stripped) once per test binary run, into a temp dir, plus the naive
// go-landlock runner of testdata/naiverunner for comparison.
func benchBinaries(b *testing.B) (runner, empty string) {
	buildOnce.Do(func() {
		benchDir, buildErr = os.MkdirTemp("", "dshsim-bench-")
		if buildErr != nil {
			return
		}
		if runnerBin, buildErr = sandboxtest.BuildRunner("", benchDir); buildErr != nil {
			return
		}
		src := filepath.Join(benchDir, "empty")
		os.Mkdir(src, 0o755)
		os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
		if emptyBin, buildErr = sandboxtest.Build(src, benchDir, "empty-go", "./main.go"); buildErr != nil {
			return
		}
		naiveBin, buildErr = sandboxtest.Build("", benchDir, "naive-runner", "./testdata/naiverunner")
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return runnerBin, emptyBin
}

func run(b *testing.B, argv ...string) {
	if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
		b.Fatalf("%q: %v", argv, err)
	}
}

// BenchmarkSpawnTrue spawns /bin/true with exec.Command(...).Run() in every
// way the stack can; compare each against "bare" from the same run
// (benchstat, or the ratio of ns/op). The runner-* rows split the runner's
// cost: runtime start-up of an empty static Go binary, start-up plus ABI
// query, ruleset and restriction (then a failing exec), and the full
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
		opts Options
	}{{"inproc", Options{}}, {"inproc-reuse", Options{ReuseThreads: true}}} {
		b.Run(v.name, func(b *testing.B) {
			sandboxtest.RequireLandlock(b, 1)
			l, err := NewWithOptions(v.opts)
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
	b.Run("runner-startup", func(b *testing.B) {
		_, empty := benchBinaries(b)
		for b.Loop() {
			run(b, empty)
		}
	})
	b.Run("runner-rules", func(b *testing.B) {
		runner, _ := benchBinaries(b)
		argv := sandbox.Wrap([]string{runner}, sandbox.LandlockArgs(policy), []string{"/nonexistent/dshsim"})
		for b.Loop() {
			// Start-up, ABI query, ruleset, restriction, a failing exec: 125.
			exec.Command(argv[0], argv[1:]...).Run()
		}
	})
	b.Run("runner", func(b *testing.B) {
		runner, _ := benchBinaries(b)
		argv := sandbox.Wrap([]string{runner}, sandbox.LandlockArgs(policy), []string{"/bin/true"})
		for b.Loop() {
			run(b, argv...)
		}
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}
