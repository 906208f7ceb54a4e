package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ExitUsage is the exit status of a usage error.
const ExitUsage = 2

// Command is one command's flags and help.
type Command struct {
	// Name is the command's name as the user types it ("dsh-sim").
	Name string
	// Flags holds the command's flags; Parse sets its output and error handling.
	Flags *flag.FlagSet
	// Help writes the whole help text (-h) to w.
	Help func(w io.Writer)
	// NoArgs makes an argument a usage error: the command takes flags only.
	NoArgs bool
}

// Parse parses args. It returns ok when the command should run; otherwise it
// has written the help (-h, code 0) or one usage line (code [ExitUsage]) and
// the command returns code.
func (c Command) Parse(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	c.Flags.Init(c.Name, flag.ContinueOnError)
	c.Flags.SetOutput(io.Discard)
	c.Flags.Usage = func() {}
	if err := c.Flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.Help(stdout)
			return 0, false
		}
		return c.Usagef(stderr, "%v", err), false
	}
	if !hasTerminator(args) {
		for _, a := range c.Flags.Args() {
			if len(a) > 1 && strings.HasPrefix(a, "-") {
				return c.Usagef(stderr, "flag %s after the arguments: flags go before the first argument (%q)", a, c.Flags.Arg(0)), false
			}
		}
	}
	if c.NoArgs && c.Flags.NArg() > 0 {
		return c.Usagef(stderr, "unexpected argument %q (%s takes no arguments)", c.Flags.Arg(0), c.Name), false
	}
	return 0, true
}

// hasTerminator says whether args hold "--" (everything after it is an
// argument by request, dashes included).
func hasTerminator(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}

// Usagef writes the one usage line "<name>: <problem>; run <name> -h for
// usage" to stderr (newlines in the problem become spaces) and returns
// [ExitUsage].
func (c Command) Usagef(stderr io.Writer, format string, args ...any) int {
	return Usagef(stderr, c.Name, format, args...)
}

// Usagef is [Command.Usagef] for a command without a flag set.
func Usagef(stderr io.Writer, name, format string, args ...any) int {
	problem := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	fmt.Fprintf(stderr, "%s: %s; run %s -h for usage\n", name, problem, name)
	return ExitUsage
}

// HelpText is a [Command.Help] that writes text, then the flag set's
// defaults ([Defaults]).
func HelpText(text string, fs *flag.FlagSet) func(w io.Writer) {
	return func(w io.Writer) {
		io.WriteString(w, text)
		Defaults(fs, w)
	}
}

// Defaults writes the flag set's defaults (flag.PrintDefaults) to w, for a
// help text that lists its flags.
func Defaults(fs *flag.FlagSet, w io.Writer) {
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
