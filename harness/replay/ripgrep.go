package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
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
func resolveRipgrep(opt *Options) error {
	from := "Options.Ripgrep"
	if opt.Ripgrep == "" {
		opt.Ripgrep, from = os.Getenv(RipgrepEnv), RipgrepEnv
	}
	if opt.Ripgrep == "" {
		return nil
	}
	abs, err := filepath.Abs(opt.Ripgrep)
	if err != nil {
		return fmt.Errorf("%s %q: %w", from, opt.Ripgrep, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return fmt.Errorf("%s %q: %w", from, opt.Ripgrep, err)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s %q: not an executable file", from, opt.Ripgrep)
	}
	opt.Ripgrep = abs
	return nil
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
