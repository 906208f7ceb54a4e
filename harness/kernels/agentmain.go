package kernels

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// AgentMain is matrix-agent's main: flags -runner, -probe, -base, -cap, -provider.
func AgentMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("matrix-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var env Env
	fs.StringVar(&env.Runner, "runner", "/bin/landlock-run", "landlock-run binary")
	fs.StringVar(&env.Probe, "probe", "/bin/escape-probe", "escape-probe binary")
	fs.StringVar(&env.Base, "base", "/var/tmp/matrix", "scratch directory (outside /tmp)")
	fs.IntVar(&env.Cap, "cap", 0, "--abi-cap for the runner (0 = none)")
	provider := fs.Bool("provider", false, "also run the real sandbox provider (default chain)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := Agent(context.Background(), env, *provider, stdout); err != nil {
		fmt.Fprintf(stderr, "matrix-agent: %v\n", err)
		return 1
	}
	return 0
}
