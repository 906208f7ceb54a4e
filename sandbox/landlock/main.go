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
// process becomes the command. Main is what cmd/landlock-run and the
// testscript command call.
//
// For a confined run Main restricts the calling OS thread itself (no extra
// thread: it is about to exec or exit), so call it only in a process that
// ends with it, as a main function does; usage errors and --probe are safe
// in-process.
func Main(args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr, Execvp, true)
}

// Run is [Main] with the exec step injected: exec runs on the restricted
// thread after the partial notice; if it returns, its error is reported as
// "exec failed: <strerror>" with status 125. Tests pass an exec that probes
// the confinement instead of replacing the process.
func Run(args []string, stdout, stderr io.Writer, exec func(argv []string) error) int {
	return run(args, stdout, stderr, exec, false)
}

func run(args []string, stdout, stderr io.Writer, exec func(argv []string) error, inPlace bool) int {
	fail := func(msg string) int {
		io.WriteString(stderr, Prefix+msg+"\n")
		return ExitFailure
	}
	inv, err := Parse(args)
	if err != nil {
		return fail(err.Error())
	}
	kernel, err := KernelABI()
	if err != nil {
		return fail(err.Error())
	}
	if inv.ABI {
		io.WriteString(stdout, "landlock: kernel ABI "+strconv.Itoa(kernel)+"\n")
		return 0
	}
	// --8<-- [start:confined-run]
	abi := EffectiveABI(kernel, inv.ABICap)
	ro, rw := inv.RO, inv.RW
	if inv.Probe {
		ro, rw = []string{"/"}, nil
	}
	rs, err := NewRuleset(abi, ro, rw)
	if err != nil {
		return fail(err.Error())
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
		execErr = exec(inv.Argv)
		return nil
	}
	if inPlace && !inv.Probe {
		err = RestrictThisThread(rs.FD)
		if err == nil {
			err = confined()
		}
	} else {
		err = OnRestrictedThread(rs.FD, confined)
	}
	if err != nil {
		return fail(err.Error())
	}
	// --8<-- [end:confined-run]
	if inv.Probe {
		if Partial(abi) {
			io.WriteString(stdout, ProbePartial+"\n")
		} else {
			io.WriteString(stdout, ProbeFull+"\n")
		}
		return 0
	}
	if execErr == nil {
		execErr = errors.New("exec returned without replacing the process")
	}
	return fail("exec failed: " + Strerror(execErr))
}
