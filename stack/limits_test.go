package stack_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
)

// TestLimitsBoundEveryCall: the composition's Limits reach every bash call,
// confined (workspace-write) or not (danger-full-access): a write past the
// file size bound stops short of it, and the result's sandbox facts name
// the bound. A stack whose policy resolver dropped Limits would write the
// whole file and name nothing.
func TestLimitsBoundEveryCall(t *testing.T) {
	const bound = "the file size bound (4096 bytes, RLIMIT_FSIZE)"
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.DangerFullAccess} {
		t.Run(string(mode), func(t *testing.T) {
			s, ws, _ := newStackConfig(t, stack.Config{Mode: mode, Approval: stack.ApprovalNever, SandboxConfig: stack.SandboxConfig{Limits: sandbox.Limits{FileSize: 4096}}})
			r := bash(t, s, "c1", "head -c 100000 /dev/zero > big", nil)
			if f := sandbox.FactsOf(r.Sandbox); f == nil || f.Bound != bound {
				t.Errorf("facts %+v of %q: want the bound %q named", f, r.Text(), bound)
			}
			if fi, err := os.Stat(filepath.Join(ws, "big")); err != nil || fi.Size() > 4096 {
				t.Errorf("big: %v, %v; want at most 4096 bytes", fi, err)
			}
			if r := bash(t, s, "c2", "head -c 1000 /dev/zero > small && echo ok", nil); r.IsError || r.Text() != "ok\n" {
				t.Errorf("a write under the bound: %q", r.Text())
			}
		})
	}
}
