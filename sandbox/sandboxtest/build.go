package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// RunnerPackage is the import path of the runner's main package.
const RunnerPackage = "github.com/dshsim/dshsim/cmd/landlock-run"

// Build compiles the main package pkg into dir/name and returns its path.
// root is a directory inside this module to run the go tool from ("" = the
// current directory); env is added to the build's environment (for example
// GOARCH for a guest).
func Build(root, dir, name, pkg string, env ...string) (string, error) {
	return BuildContext(context.Background(), root, dir, name, pkg, env...)
}

// BuildContext is [Build] that cancelling ctx stops (the go tool is killed).
// The go tool's work directory (GOTMPDIR) is one this function makes under
// dir and removes when the tool is done: a go tool killed mid-build leaves
// its work directory behind. The go tool is the one on PATH: go test puts
// the bin directory of the toolchain that runs it first on a test's PATH,
// and a command (dsh-sim, kernel-matrix) uses the user's.
func BuildContext(ctx context.Context, root, dir, name, pkg string, env ...string) (string, error) {
	out := filepath.Join(dir, name)
	work, err := os.MkdirTemp(dir, "gotmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	// -buildvcs=false: no VCS stamp to read, so a user who does not own the
	// checkout (git refuses it as dubious ownership) can build it too.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0", "GOTMPDIR="+work), env...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}

// BuildRunner builds landlock-run into dir (running the go tool in root) and
// returns its path.
func BuildRunner(root, dir string) (string, error) {
	return Build(root, dir, "landlock-run", RunnerPackage)
}

// built is the runner this test binary built, and where.
var built struct {
	sync.Mutex
	main bool   // Main is running the tests
	dir  string // temporary directory holding the runner ("" before the build)
	path string
	err  error
}

// Main runs the tests of m and then removes the directory [Runner] built
// into; it returns the exit code for os.Exit. Call it from TestMain in every
// package whose tests call Runner (after any re-exec helper dispatch).
func Main(m *testing.M) int {
	built.Lock()
	built.main = true
	built.Unlock()
	code := m.Run()
	built.Lock()
	defer built.Unlock()
	if built.dir != "" {
		if err := os.RemoveAll(built.dir); err != nil {
			fmt.Fprintf(os.Stderr, "sandboxtest: removing the built runner: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		built.dir, built.path = "", ""
	}
	return code
}

// RunnerEnv names the runner an outer test built for an inner run of the
// same test binary as another user, who cannot build one: the outer test
// passes {RunnerEnv: Runner(t)} as the run's executables, and [Runner]
// returns that path in the inner run.
const RunnerEnv = "DSHSIM_TEST_LANDLOCK_RUN"

// Runner returns the path of landlock-run built from this module's source,
// building it on the first call of this test binary ($DSHSIM_TEST_LANDLOCK_RUN
// when set: see [RunnerEnv]). It fails t when the build fails, and when
// TestMain does not run the tests through [Main] (nothing would remove the
// binary).
func Runner(t testing.TB) string {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if !built.main {
		t.Fatal("sandboxtest.Runner: this package's TestMain must return through sandboxtest.Main, which removes the built runner")
		return ""
	}
	if p := os.Getenv(RunnerEnv); p != "" {
		return p
	}
	if built.path == "" && built.err == nil {
		built.dir, built.err = os.MkdirTemp("", "dshsim-runner-")
		if built.err == nil {
			built.path, built.err = BuildRunner("", built.dir)
		}
	}
	if built.err != nil {
		t.Fatalf("building landlock-run: %v", built.err)
	}
	return built.path
}
