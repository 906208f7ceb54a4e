package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// firstPinnedFD is the descriptor number Argv gives the first of a
// confinement's [ConfinedArgv.Files] when the start passes no descriptor of
// its own: 4, with 3 left closed. bwrap opens /proc before it reads its
// mounts, at the lowest free number; had Argv named that number, a start
// that did not pass Files would have bwrap bind its own /proc descriptor,
// the host's procfs, writable at the workspace (bwrap 0.8.0 run by root did
// exactly that). With the number after it left closed, such a start fails:
// bwrap finds no descriptor to bind.
const firstPinnedFD = 4

// pinnedFD is Argv's number for the n-th (from 0) of a confinement's
// Files, for a start that passes no descriptor of its own.
func pinnedFD(n int) string { return strconv.Itoa(firstPinnedFD + n) }

// isFDBind reports whether a bwrap flag binds an inherited descriptor (its
// next operand is the descriptor's number).
func isFDBind(flag string) bool { return flag == "--bind-fd" || flag == "--ro-bind-fd" }

// pin makes c's Argv, runner ++ profile ++ "--" ++ the command, name files:
// the operand after each --bind-fd and --ro-bind-fd of profile is, in
// order, one of files ([ConfinedArgv.Files]). An error when the counts
// differ: a profile and its files built apart.
func (c *ConfinedArgv) pin(runner, profile []string, files []*os.File) error {
	var at []int
	for i := 0; i+1 < len(profile); i++ {
		if isFDBind(profile[i]) {
			at = append(at, len(runner)+i+1)
			i++
		}
	}
	if len(at) != len(files) {
		return fmt.Errorf("sandbox: the %s profile binds %d descriptors but %d were opened; refusing to run it", c.Backend, len(at), len(files))
	}
	c.Files, c.fileArgs = files, at
	return nil
}

// Inherit is how to start c with extra, the caller's own descriptors,
// inherited as 3, 4, ... (exec.Cmd.ExtraFiles): the argv to start, with each
// of c's [ConfinedArgv.Files] numbered after them, and every descriptor the
// command inherits, in order: extra, one closed (nil) entry (see
// firstPinnedFD), then Files. Without Files it is c.Argv and extra
// unchanged. Neither c nor extra is modified.
func (c ConfinedArgv) Inherit(extra []*os.File) (argv []string, files []*os.File) {
	if len(c.Files) == 0 {
		return c.Argv, extra
	}
	argv = append([]string(nil), c.Argv...)
	for i, at := range c.fileArgs {
		argv[at] = pinnedFD(len(extra) + i)
	}
	files = append(make([]*os.File, 0, len(extra)+firstPinnedFD-3+len(c.Files)), extra...)
	files = append(files, make([]*os.File, firstPinnedFD-3)...) // closed in the command
	return argv, append(files, c.Files...)
}

// Close closes c's [ConfinedArgv.Files], this process's copies: after the
// start (the command holds its own), or when c is not started. Safe to call
// more than once.
func (c ConfinedArgv) Close() error { return closeFiles(c.Files) }

// closeFiles closes every file of files, nil entries and files already
// closed skipped; the first other error.
func closeFiles(files []*os.File) error {
	var first error
	for _, f := range files {
		if f == nil {
			continue
		}
		if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) && first == nil {
			first = err
		}
	}
	return first
}
