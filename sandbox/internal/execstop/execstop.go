package execstop

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/dshsim/dshsim/sandbox"
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

// Limits sets every resource limit of rs on the child.
func (s Stopped) Limits(rs []sandbox.Rlimit) error {
	for _, r := range rs {
		if err := s.Limit(r.Resource, r.Soft, r.Hard); err != nil {
			return err
		}
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

// Start starts cmd stopped before its first instruction, calls at[0] with
// it, and lets it run; see the package doc. With more functions, at[i] runs
// at the stop after its i+1-th execve (the program it ran first, a runner,
// executes the next), the child running on between them; a child that
// ends before a later stop ran its first program only, and its status is
// left for cmd.Wait. The caller's goroutine must be locked to its thread.
// cmd.SysProcAttr gets Ptrace for the start and is put back afterwards.
// When a function fails (or the first stop never comes) the child is
// killed and reaped (cmd.Wait) before Start returns the error; a failure
// of cmd.Start itself is returned as it is.
func Start(cmd *exec.Cmd, at ...func(Stopped) error) error {
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

// held waits for each of s's stops after an execve, runs its function and
// lets it go: on to the next execve, or (after the last) for good.
func held(s Stopped, at []func(Stopped) error) error {
	for i, f := range at {
		if done, err := awaitExec(s, i); done || err != nil {
			return err
		}
		if err := f(s); err != nil {
			return err
		}
		if i < len(at)-1 {
			if err := llsys.PtraceCont(s.pid, 0); err != nil {
				return fmt.Errorf("let the child run on: %w", err)
			}
		}
	}
	if err := llsys.PtraceDetach(s.pid); err != nil {
		return fmt.Errorf("let the child go: %w", err)
	}
	return nil
}

// awaitExec waits for s's stop after its i+1-th execve. Before the first,
// any other stop or an end is ErrNoStop; before a later one, a signal that
// stopped it is delivered to it as it would have been, and an end means it
// ran no further program (done, nil).
func awaitExec(s Stopped, i int) (done bool, err error) {
	for {
		sig, ended, err := llsys.WaitStop(s.pid)
		switch {
		case ended && i > 0:
			return true, nil
		case err != nil:
			return false, fmt.Errorf("%w: %v", ErrNoStop, err)
		case sig == syscall.SIGTRAP:
			return false, nil
		case i == 0:
			return false, fmt.Errorf("%w: stopped by %v", ErrNoStop, sig)
		}
		if err := llsys.PtraceCont(s.pid, sig); err != nil {
			return false, fmt.Errorf("deliver %v to the child: %w", sig, err)
		}
	}
}
