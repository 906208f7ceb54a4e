package sandboxtest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/internal/llsys"
)

// LandlockABI returns the kernel's Landlock ABI, 0 when the kernel has no
// Landlock (not built in, or disabled at boot).
func LandlockABI() int {
	abi, err := llsys.ABIVersion()
	if err != nil || abi < 1 {
		return 0
	}
	return abi
}

// RequireLandlock skips t unless the kernel's Landlock ABI is at least abi
// (1 for any Landlock), and returns the kernel's ABI.
func RequireLandlock(t testing.TB, abi int) int {
	t.Helper()
	got := LandlockABI()
	switch {
	case got == 0:
		t.Skipf("needs Landlock ABI >= %d: this kernel has no Landlock (not built in, or disabled at boot)", abi)
	case got < abi:
		t.Skipf("needs Landlock ABI >= %d: this kernel has ABI %d", abi, got)
	}
	return got
}

// Bwrap reports whether bubblewrap can confine here: the provider's own
// probe (sandbox.ProbeBwrap), run once per test binary.
var Bwrap = sync.OnceValue(func() bool {
	ctx, cancel := context.WithTimeout(context.Background(), sandbox.DefaultProbeTimeout)
	defer cancel()
	return sandbox.ProbeBwrap(ctx)
})

// RequireBwrap skips t unless bubblewrap can confine here.
func RequireBwrap(t testing.TB) {
	t.Helper()
	if !Bwrap() {
		t.Skipf("needs bubblewrap that can confine here: bwrap %s failed (not installed, or no user namespaces)", strings.Join(sandbox.BwrapProbeArgs(), " "))
	}
}

// Condition answers the testscript conditions [landlock:N] and [bwrap];
// anything else is an error naming the known ones.
func Condition(cond string) (bool, error) {
	if n, ok := strings.CutPrefix(cond, "landlock:"); ok {
		want, err := strconv.Atoi(n)
		if err != nil || want < 1 {
			return false, fmt.Errorf("condition [%s]: want [landlock:N] with N >= 1", cond)
		}
		return LandlockABI() >= want, nil // no Landlock at all (0): below every N
	}
	if cond == "bwrap" {
		return Bwrap(), nil
	}
	return false, fmt.Errorf("unknown condition [%s] (known: [landlock:N], [bwrap])", cond)
}
