package noderuntime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/dshsim/dshsim/internal/landlockrun"
	"github.com/dshsim/dshsim/internal/landlockrun/runnerbuild"
	"github.com/dshsim/dshsim/sandbox"
)

var runnerPath string // built landlock-run, "" when the build failed

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dshsim-noderuntime-runner-")
	if err == nil {
		runnerPath, err = runnerbuild.Runner("", dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building landlock-run:", err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// provider returns the real provider restricted to one backend, or skips
// with the reason it cannot confine here.
func provider(t testing.TB, backend string) *sandbox.Provider {
	t.Helper()
	switch backend {
	case sandbox.BackendBwrap:
		if _, err := exec.LookPath("bwrap"); err != nil {
			t.Skip("needs bwrap (not installed)")
		}
		if !sandbox.ProbeBwrap(context.Background()) {
			t.Skip("needs bwrap able to confine here (its probe failed)")
		}
	case sandbox.BackendLandlock:
		if _, err := landlockrun.KernelABI(); err != nil {
			t.Skip("needs a Landlock kernel")
		}
		if runnerPath == "" {
			t.Fatal("landlock-run was not built")
		}
	}
	p, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{backend}, LauncherPath: runnerPath})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// varTmpDir is a fresh directory under /var/tmp: a workspace must not live
// under /tmp, which workspace-write grants (Landlock) or replaces (bwrap).
func varTmpDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
