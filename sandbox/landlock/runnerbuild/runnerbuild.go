package runnerbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Package is the import path of the runner's main package.
const Package = "github.com/dshsim/dshsim/cmd/landlock-run"

// Build compiles pkg (normally [Package]) into dir/name and returns its path.
// root is a directory inside this module to run the go tool from ("" = the
// current directory).
func Build(root, dir, name, pkg string) (string, error) {
	out := filepath.Join(dir, name)
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}

// Runner builds landlock-run into dir (running the go tool in root) and
// returns its path.
func Runner(root, dir string) (string, error) { return Build(root, dir, "landlock-run", Package) }
