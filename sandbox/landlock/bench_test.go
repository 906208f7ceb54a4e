package landlock

import (
	"testing"

	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// BenchmarkNewRuleset is the runner's rule setup alone, in-process: ABI
// query, ruleset creation, and the four workspace-write grants (open O_PATH,
// fstat, add rule, close), then closing the ruleset.
func BenchmarkNewRuleset(b *testing.B) {
	kernel, err := KernelABI()
	if err != nil {
		b.Skip(err)
	}
	ws := sandboxtest.TempDir(b, "dshsim-bench-")
	for b.Loop() {
		if _, err := KernelABI(); err != nil {
			b.Fatal(err)
		}
		rs, err := NewRuleset(EffectiveABI(kernel, 0), Rules{RO: []string{"/"}, RW: []string{"/dev/null", "/tmp", ws}})
		if err != nil {
			b.Fatal(err)
		}
		rs.Close()
	}
}

// BenchmarkRestrictThrowawayThread is a restriction on a fresh locked thread
// that then dies (what --probe and the in-process path without spare
// threads pay): thread creation dominates.
func BenchmarkRestrictThrowawayThread(b *testing.B) {
	kernel, err := KernelABI()
	if err != nil {
		b.Skip(err)
	}
	rs, err := NewRuleset(EffectiveABI(kernel, 0), Rules{RO: []string{"/"}})
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close()
	for b.Loop() {
		if err := OnRestrictedThread(rs.FD, nil); err != nil {
			b.Fatal(err)
		}
	}
}
