package harness

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sim is one simulation of dsh-sim's table (package harness/sims): it drives the real stack and returns the
// effect files it produced, keyed by their path under snapshots/ (for example
// "txt/profiles.txt").
type Sim struct {
	// Name selects the sim with dsh-sim -run (a regexp over names).
	Name string
	// Summary is one line for dsh-sim -list and -h.
	Summary string
	// Files lists every path the sim writes, so -check can report a missing one.
	Files []string
	// Run produces the files. It must be deterministic on a machine class: every
	// varying path, time and id normalised (see [Replacer]).
	Run func(env *Env) (map[string][]byte, error)
}

// Env is what a sim may use.
type Env struct {
	// Root is the repository root (where snapshots/ and transcripts/ live).
	Root string
	// TempDir returns a fresh directory under $TMPDIR, removed after the run
	// (a run directory, [MkdirRun]).
	TempDir func() (string, error)
	// Logf writes progress to stderr (never into an effect file).
	Logf func(format string, args ...any)
}

// CheckSims says what is wrong with a table of sims (dsh-sim checks the
// table it is given before it runs any): the names must be sorted and
// distinct, every sim must have a Run and files, and no file may be claimed
// by two sims.
func CheckSims(sims []Sim) error {
	var errs []error
	owner := map[string]string{}
	for i, s := range sims {
		if i > 0 && sims[i-1].Name >= s.Name {
			errs = append(errs, fmt.Errorf("sims %q and %q are not sorted by name, or one name is listed twice", sims[i-1].Name, s.Name))
		}
		if s.Run == nil || len(s.Files) == 0 {
			errs = append(errs, fmt.Errorf("sim %q has no Run or no files", s.Name))
		}
		for _, f := range s.Files {
			if other, ok := owner[f]; ok {
				errs = append(errs, fmt.Errorf("file %s claimed by sims %q and %q", f, other, s.Name))
			}
			owner[f] = s.Name
		}
	}
	return errors.Join(errs...)
}

// Replacer normalises varying text: each (old, placeholder) pair is replaced,
// longest old string first, so nested paths normalise before their parents.
type Replacer struct{ pairs [][2]string }

// Add registers old -> placeholder; empty old strings are ignored.
func (r *Replacer) Add(old, placeholder string) *Replacer {
	if old != "" {
		r.pairs = append(r.pairs, [2]string{old, placeholder})
	}
	return r
}

// Replace applies every pair, longest old string first.
func (r *Replacer) Replace(s string) string {
	ps := append([][2]string(nil), r.pairs...)
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i][0]) > len(ps[j][0]) })
	for _, p := range ps {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}
