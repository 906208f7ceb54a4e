package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/dshsim/dshsim/stack"
)

// RipgrepEnv names the ripgrep glob and grep run: upstream's, the rg of
// the npm package @vscode/ripgrep-linux-x64 its install ships (ripgrep 15,
// whose own error texts the recordings quote; .ci/run points it at the one
// the oracle's install holds). Unset, glob and grep run rg on PATH
// (Debian's ripgrep 13, whose texts differ: the fs-search-edges departure).
const RipgrepEnv = "DSHSIM_RIPGREP"

// resolveRipgrep fills opt.Ripgrep from RipgrepEnv when it is empty and
// makes it absolute; a named rg that is not an executable regular file is
// an error naming where it was named (never a silent fallback to PATH's).
func resolveRipgrep(opt *Options) (err error) {
	opt.Ripgrep, err = ripgrepPath(opt.Ripgrep, "Options.Ripgrep")
	return err
}

// ripgrepPath is the rg named by named (from says where) or, when named
// is "", by RipgrepEnv, made absolute; "" when neither names one (rg on
// PATH runs). A named rg that is not an executable regular file is an
// error naming where it was named.
func ripgrepPath(named, from string) (string, error) {
	if named == "" {
		named, from = os.Getenv(RipgrepEnv), RipgrepEnv
	}
	if named == "" {
		return "", nil
	}
	abs, err := filepath.Abs(named)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", from, named, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s %q: %w", from, named, err)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%s %q: not an executable file", from, named)
	}
	return abs, nil
}

// snapshotFileSearch is glob and grep as the one upstream overlay that
// mounts tool-fs-search composes them (sampled over the cap, 4 results),
// running rg: a recording's search calls replay under it, and dsh-record
// records under it, so what it records replays alike.
func snapshotFileSearch(rg string) *stack.FileSearchConfig {
	return &stack.FileSearchConfig{Rg: rg, SampleOverCapGlobResults: true, GlobMaxResults: 4}
}

// ripgrepNote names the ripgrep glob and grep ran, with its version: rg's
// own texts (its errors, quoted in the tools' failures) are its version's.
func ripgrepNote(rg string) string {
	where := "rg on PATH (" + RipgrepEnv + " unset; upstream's install ships ripgrep 15, @vscode/ripgrep-linux-x64)"
	prog := "rg"
	if rg != "" {
		where, prog = rg+" ("+RipgrepEnv+")", rg
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, prog, "--version").Output()
	version, _, _ := bytes.Cut(out, []byte("\n"))
	if err != nil || len(version) == 0 {
		return fmt.Sprintf("glob and grep run %s, whose version could not be read: %v", where, err)
	}
	return fmt.Sprintf("glob and grep ran %s from %s", version, where)
}
