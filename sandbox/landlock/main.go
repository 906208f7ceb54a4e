package landlock

import (
	"errors"
	"io"
	"strconv"
)

// Prefix starts every line the runner itself prints on stderr.
const Prefix = "landlock-run: "

// ExitFailure is the exit status of every runner-level failure.
const ExitFailure = 125

// PartialNotice is the VERBATIM informational line printed on stderr when the
// ABI in use is older than [MaxABI]; the command still runs.
const PartialNotice = "landlock-run: partial enforcement (older Landlock ABI)"

// Probe output lines, VERBATIM.
const (
	ProbeFull    = "landlock: fully enforced"
	ProbePartial = "landlock: partially enforced (older ABI)"
)

// Main runs the landlock-run command line args (without the program name)
// and returns the exit status. On a confined run it never returns: the
// process becomes the command. The scenario tests' landlock-run command calls
// it; cmd/landlock-run calls [InitMain].
//
// For a confined run Main locks the calling goroutine to its OS thread and
// restricts that thread itself (no extra goroutine: it is about to exec or
// exit), so call it only in a process that ends with it, as a main function
// does; usage errors and --probe are safe in-process.
func Main(args []string, stdout, stderr io.Writer) int {
	return status(args, options{stdout: stdout, stderr: stderr, exec: Execvp, restrictHere: RestrictThisThread})
}

// InitMain is [Main] for an init function of package main, which is where
// cmd/landlock-run calls it. The Go runtime runs every init function on the
// startup thread with the main goroutine locked to it (runtime.LockOSThread's
// documentation), so InitMain restricts and execs from that thread as it is.
// runtime.LockOSThread would first start the runtime's template thread: one
// more clone on the way to the command and one more thread for execve to
// kill. As a guard, InitMain refuses to restrict (exit 125, the command never
// runs) on any thread but the startup thread.
func InitMain(args []string, stdout, stderr io.Writer) int {
	return status(args, options{stdout: stdout, stderr: stderr, exec: Execvp, restrictHere: restrictStartupThread})
}

// Run is [Main] with the exec step injected: exec runs on a fresh restricted
// thread after the partial notice; if it returns, its error is reported as
// "exec failed: <strerror>" with status 125. Tests pass an exec that probes
// the confinement instead of replacing the process.
func Run(args []string, stdout, stderr io.Writer, exec func(argv []string) error) int {
	return status(args, options{stdout: stdout, stderr: stderr, exec: exec})
}

// options are one run of the runner: the command line as parsed ([Parse]),
// where it writes, and how a confined run ends. restrictHere restricts the
// calling thread for a confined run that execs in place; nil runs the exec
// step on a throwaway restricted thread ([OnRestrictedThread]), as --probe
// always does.
type options struct {
	inv            Invocation
	stdout, stderr io.Writer
	exec           func(argv []string) error
	restrictHere   func(rulesetFD int) error
}

// status parses args into o, runs it, and returns the exit status: 0, or
// [ExitFailure] after the one line "landlock-run: <error>" on stderr (usage
// errors included: the runner's contract is upstream's, not
// harness/cmdline's).
func status(args []string, o options) int {
	inv, err := Parse(args)
	if err == nil {
		o.inv = inv
		err = run(o)
	}
	if err != nil {
		io.WriteString(o.stderr, Prefix+err.Error()+"\n")
		return ExitFailure
	}
	return 0
}

// run does what o.inv asks: print the kernel's ABI (--abi), probe (--probe),
// or restrict and exec the command; on success of a confined run it does not
// return (the process became the command).
func run(o options) error {
	inv, stdout, stderr := o.inv, o.stdout, o.stderr
	kernel, err := KernelABI()
	if err != nil {
		return err
	}
	if inv.ABI {
		io.WriteString(stdout, "landlock: kernel ABI "+strconv.Itoa(kernel)+"\n")
		return nil
	}
	// --8<-- [start:confined-run]
	abi := EffectiveABI(kernel, inv.ABICap)
	ro, rw := inv.RO, inv.RW
	if inv.Probe {
		ro, rw = []string{"/"}, nil
	}
	var scoped uint64
	if inv.Scope {
		if err := ScopeAvailable(kernel, inv.ABICap); err != nil {
			return err
		}
		scoped = ScopeSignal | ScopeAbstractUnixSocket
	}
	rs, err := NewRuleset(abi, Rules{RO: ro, RW: rw, Inodes: inv.Inodes, Scoped: scoped})
	if err != nil {
		return err
	}
	defer rs.Close()
	var execErr error
	confined := func() error {
		if inv.Probe {
			return nil
		}
		if Partial(abi) {
			io.WriteString(stderr, PartialNotice+"\n")
		}
		execErr = o.exec(inv.Argv)
		return nil
	}
	if o.restrictHere != nil && !inv.Probe {
		err = o.restrictHere(rs.FD)
		if err == nil {
			err = confined()
		}
	} else {
		err = OnRestrictedThread(rs.FD, confined)
	}
	if err != nil {
		return err
	}
	// --8<-- [end:confined-run]
	if inv.Probe {
		if Partial(abi) {
			io.WriteString(stdout, ProbePartial+"\n")
		} else {
			io.WriteString(stdout, ProbeFull+"\n")
		}
		return nil
	}
	if execErr == nil {
		execErr = errors.New("exec returned without replacing the process")
	}
	return errors.New("exec failed: " + Strerror(execErr))
}
