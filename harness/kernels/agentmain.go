package kernels

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/cmdline"
)

// AgentUsage is the text matrix-agent -h prints before its flags.
const AgentUsage = `usage: matrix-agent [-runner FILE] [-probe FILE] [-base DIR] [-cap N] [-provider]

matrix-agent runs the kernel-matrix probes under the Landlock runner and prints
one "@@DSHSIM {json}" record per line on stdout, ending with an "end" record;
it is /init's payload in the kernel-matrix initramfs. It makes -base when
missing and removes it at the end. It takes no arguments.

Exit status: 0 all records written; 1 a probe could not be set up or a record
could not be written; 2 usage error.

Flags:
`

// AgentMain is matrix-agent's main: flags -runner, -probe, -base, -cap,
// -provider. When stdout is a terminal (a guest's serial console) it waits
// until the console has sent every record before it returns (tcdrain): /init
// powers the guest off right after, and bytes still queued in the console
// would be lost with the end record among them.
func AgentMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("matrix-agent", flag.ContinueOnError)
	var env Env
	fs.StringVar(&env.Runner, "runner", "/bin/landlock-run", "landlock-run binary")
	fs.StringVar(&env.Probe, "probe", "/bin/escape-probe", "escape-probe binary")
	fs.StringVar(&env.Base, "base", "/var/tmp/matrix", "scratch directory (outside /tmp)")
	fs.IntVar(&env.Cap, "cap", 0, "--abi-cap for the runner (0 = none)")
	provider := fs.Bool("provider", false, "also run the real sandbox provider (default chain)")
	cmd := cmdline.Command{Name: "matrix-agent", Flags: fs, Help: cmdline.HelpText(AgentUsage, fs), NoArgs: true}
	if code, ok := cmd.Parse(args, stdout, stderr); !ok {
		return code
	}
	if env.Cap < 0 {
		return cmd.Usagef(stderr, "-cap %d: want 0 (none) or a positive ABI", env.Cap)
	}
	defer drain(stdout)
	defer drain(stderr)
	if err := Agent(context.Background(), env, *provider, stdout); err != nil {
		fmt.Fprintf(stderr, "matrix-agent: %v\n", err)
		return 1
	}
	return 0
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
