package kernels

import (
	"context"
	"flag"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/cmdline"
)

// AgentUsage is the text matrix-agent -h prints before its flags.
const AgentUsage = `usage: matrix-agent [-runner FILE] [-probe FILE] [-base DIR] [-cap N] [-provider]

matrix-agent runs the kernel-matrix probes under the Landlock runner and on the
stack's default Landlock path (in-process, the runner its fallback), and prints
one "@@DSHSIM {json}" record per line on stdout, ending with an "end" record;
it is /init's payload in the kernel-matrix initramfs. It makes -base when
missing and removes it at the end. It takes no arguments.

Exit status: 0 all records written; 1 a probe could not be set up or a record
could not be written; 2 usage error.

Flags:
`

// agentOptions are one matrix-agent invocation: the flags as parsed
// ([agentCommand]), then checked by validate.
type agentOptions struct {
	env            Env
	provider       bool
	stdout, stderr io.Writer
}

// agentCommand is matrix-agent's flag set, parsing into o.
func agentCommand(o *agentOptions) cmdline.Command {
	fs := flag.NewFlagSet("matrix-agent", flag.ContinueOnError)
	fs.StringVar(&o.env.Runner, "runner", "/bin/landlock-run", "landlock-run binary")
	fs.StringVar(&o.env.Probe, "probe", "/bin/escape-probe", "escape-probe binary")
	fs.StringVar(&o.env.Base, "base", "/var/tmp/matrix", "scratch directory (outside /tmp)")
	fs.IntVar(&o.env.Cap, "cap", 0, "--abi-cap for the runner (0 = none)")
	fs.BoolVar(&o.provider, "provider", false, "also run the stack's confiner (default chain, Landlock in-process)")
	return cmdline.Command{Name: "matrix-agent", Flags: fs, Help: cmdline.HelpText(AgentUsage, fs), NoArgs: true}
}

// AgentMain is matrix-agent's main: the flags (-runner, -probe, -base, -cap,
// -provider) are parsed into options, then runAgent. When stdout or stderr
// is a terminal (a guest's serial console) it waits until the console has
// sent everything, an error or usage line included, before it returns (tcdrain):
// /init powers the guest off right after, and bytes still queued in the
// console would be lost with the end record among them.
func AgentMain(args []string, stdout, stderr io.Writer) int {
	o := &agentOptions{stdout: stdout, stderr: stderr}
	defer drain(stdout)
	defer drain(stderr)
	return agentCommand(o).Main(args, stdout, stderr, func([]string) error { return runAgent(o) })
}

func (o *agentOptions) validate() error {
	if o.env.Cap < 0 {
		return cmdline.Usage("-cap %d: want 0 (none) or a positive ABI", o.env.Cap)
	}
	return nil
}

// runAgent validates o and runs the probes ([Agent]).
func runAgent(o *agentOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	return Agent(context.Background(), o.env, o.provider, o.stdout)
}

// drain waits until everything written to w has been sent when w is a
// terminal (tcdrain: ioctl TCSBRK with a non-zero argument).
func drain(w io.Writer) {
	if f, ok := w.(*os.File); ok {
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			_ = unix.IoctlSetInt(int(f.Fd()), unix.TCSBRK, 1)
		}
	}
}
