package execstop

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/dshsim/dshsim/sandbox/internal/llsys"
)

// Stopped is a child stopped before its first instruction, traced by the
// calling thread.
type Stopped struct{ pid int }

// Pid is the child's process id.
func (s Stopped) Pid() int { return s.pid }

// Limit sets the child's soft and hard limits of resource (a
// syscall.RLIMIT_* or unix.RLIMIT_* number).
func (s Stopped) Limit(resource int, soft, hard uint64) error {
	if err := llsys.Prlimit(s.pid, resource, soft, hard); err != nil {
		return fmt.Errorf("set limit %d of the child: %w", resource, err)
	}
	return nil
}

// RestrictSelf makes the child enforce the Landlock ruleset it holds as
// descriptor fd (landlock_restrict_self, no flags), then close fd. The
// child has no_new_privs or no capabilities to spare already: it inherits
// the state of the thread that started it.
func (s Stopped) RestrictSelf(fd int) error {
	if err := restrictSelf(s.pid, fd); err != nil {
		return fmt.Errorf("landlock the child in a domain of its own: %w", err)
	}
	return nil
}

// Start starts cmd stopped before its first instruction, calls at with it,
// and lets it run; see the package doc. The caller's goroutine must be
// locked to its thread. cmd.SysProcAttr gets Ptrace for the start and is
// put back afterwards. When at fails (or the stop never comes) the child is
// killed and reaped (cmd.Wait) before Start returns the error; a failure of
// cmd.Start itself is returned as it is.
func Start(cmd *exec.Cmd, at func(Stopped) error) error {
	orig := cmd.SysProcAttr
	attr := syscall.SysProcAttr{}
	if orig != nil {
		attr = *orig
	}
	attr.Ptrace = true
	cmd.SysProcAttr = &attr
	err := cmd.Start()
	cmd.SysProcAttr = orig
	if err != nil {
		return err
	}
	s := Stopped{cmd.Process.Pid}
	if err := held(s, at); err != nil {
		llsys.Kill(s.pid)
		cmd.Wait()
		return err
	}
	return nil
}

// ErrNoStop is returned when the started child did not stop with SIGTRAP
// before its first instruction.
var ErrNoStop = errors.New("the child did not stop before its first instruction")

// held waits for s's stop after exec, runs at and detaches.
func held(s Stopped, at func(Stopped) error) error {
	sig, err := llsys.WaitStop(s.pid)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoStop, err)
	}
	if sig != syscall.SIGTRAP {
		return fmt.Errorf("%w: stopped by %v", ErrNoStop, sig)
	}
	if err := at(s); err != nil {
		return err
	}
	if err := llsys.PtraceDetach(s.pid); err != nil {
		return fmt.Errorf("let the child go: %w", err)
	}
	return nil
}
