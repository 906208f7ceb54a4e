package sandbox

import (
	"fmt"
	"strings"
)

// ShellQuote renders argv as one shell-readable line (single quotes where
// needed), for display only.
func ShellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = quoteArg(a)
	}
	return strings.Join(out, " ")
}

func quoteArg(a string) string {
	if a == "" {
		return "''"
	}
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_/.:=@%+,-<>", r)) {
			return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return a
}

// Example values [ProfilesDump] uses for the platforms it does not run on.
const (
	ExampleDarwinTempDir  = "/private/var/folders/ab/T"
	ExampleWindowsTempDir = `C:\Users\u\AppData\Local\Temp`
)

// ProfilesDump renders what every platform's builder emits for both confined
// modes with workspace ws and the command bash -c 'echo hi': one line per
// platform/backend and mode, then the two Seatbelt profiles on their own.
// The macOS temp dir and the Windows temp dir are the example values above;
// the Landlock launcher is shown as landlock-run and the Windows runner as
// node runner.js. It is pure.
func ProfilesDump(ws string) string {
	argv := []string{"bash", "-c", "echo hi"}
	var b strings.Builder
	line := func(platform string, mode Mode, full []string) {
		fmt.Fprintf(&b, "%-16s %-15s : %s\n", platform, mode, ShellQuote(full))
	}
	for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
		line("linux/bwrap", m, Wrap([]string{"bwrap"}, BwrapArgs(Policy{Mode: m, WorkspaceRoot: ws}), argv))
	}
	for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
		line("linux/landlock", m, Wrap([]string{"landlock-run"}, LandlockArgs(Policy{Mode: m, WorkspaceRoot: ws}), argv))
	}
	darwinRoots := func(m Mode) []string {
		return writableRoots(Policy{Mode: m, WorkspaceRoot: ws}, ExampleDarwinTempDir, func(p string) string {
			if p == "/tmp" {
				return "/private/tmp" // /tmp is a symlink to /private/tmp on macOS
			}
			return p
		})
	}
	for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
		line("darwin/seatbelt", m, Wrap([]string{"sandbox-exec"}, SeatbeltArgs(m, darwinRoots(m)), argv))
	}
	for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
		line("win32/acl", m, Wrap([]string{"node", "runner.js"}, WindowsACLArgs(Policy{Mode: m, WorkspaceRoot: ws}, ExampleWindowsTempDir, nil), argv))
	}
	b.WriteString("\n")
	for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
		fmt.Fprintf(&b, "seatbelt profile, %s:\n  %s\n", m, SeatbeltProfile(m, darwinRoots(m)))
	}
	return b.String()
}
