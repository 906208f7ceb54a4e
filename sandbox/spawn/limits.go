package spawn

import (
	"os/exec"
	"runtime"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/internal/execstop"
)

// limited is a start that sets l on the command before its first
// instruction (package execstop): for commands whose confinement is in
// their argv (bwrap, the runner: the limits reach every process they start)
// and unconfined ones. Through the runner (a Go program, which cannot start
// under a small address-space limit) the memory bound is set at the
// runner's execve of the command instead, the others before the runner's
// first instruction. The starting goroutine stays on its thread, the
// tracer, until the command was let go.
func limited(l sandbox.Limits, runner bool) func(*exec.Cmd) error {
	set := func(l sandbox.Limits) func(execstop.Stopped) error {
		return func(s execstop.Stopped) error { return s.Limits(l.Rlimits()) }
	}
	return func(cmd *exec.Cmd) error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if !runner || l.Memory == 0 {
			return execstop.Start(cmd, set(l))
		}
		first := l
		first.Memory = 0
		return execstop.Start(cmd, set(first), set(sandbox.Limits{Memory: l.Memory}))
	}
}
