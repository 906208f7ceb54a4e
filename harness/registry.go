package harness

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Sim is one registered simulation: it drives the real stack and returns the
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
	// TempDir returns a fresh directory removed after the run.
	TempDir func() (string, error)
	// Logf writes progress to stderr (never into an effect file).
	Logf func(format string, args ...any)
}

var (
	regMu sync.Mutex
	reg   = map[string]Sim{}
)

// Register adds a sim; a duplicate name or file panics at init (a programming error).
func Register(s Sim) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := reg[s.Name]; dup {
		panic(fmt.Sprintf("harness: sim %q registered twice", s.Name))
	}
	for _, other := range reg {
		for _, f := range other.Files {
			for _, g := range s.Files {
				if f == g {
					panic(fmt.Sprintf("harness: file %s claimed by sims %q and %q", f, other.Name, s.Name))
				}
			}
		}
	}
	reg[s.Name] = s
}

// Sims returns the registered sims sorted by name.
func Sims() []Sim {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Sim, 0, len(reg))
	for _, s := range reg {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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
