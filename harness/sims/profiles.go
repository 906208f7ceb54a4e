package sims

import (
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/sandbox"
)

// shellQuote renders argv as one shell-readable line (single quotes where
// needed), for display only.
func shellQuote(argv []string) string {
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

// Example values profilesDump uses for the platforms it does not run on,
// and the device and inode sandbox.Validate pins a workspace-write root to
// (machine-dependent: shown as <dev>:<ino>).
const (
	exampleDarwinTempDir  = "/private/var/folders/ab/T"
	exampleWindowsTempDir = `C:\Users\u\AppData\Local\Temp`
)

var exampleWorkspaceID = sandbox.FileID{Dev: 2049, Ino: 131073}

// profilesDump renders what every platform's builder emits for both confined
// modes with workspace ws and the command bash -c 'echo hi': one line per
// platform/backend and mode, then the two Seatbelt profiles on their own.
// The macOS temp dir and the Windows temp dir are the example values above;
// the Landlock launcher is shown as landlock-run and the Windows runner as
// node runner.js. It is pure: the macOS roots are what the provider computes
// there (sandbox's writable roots: the workspace, /tmp resolved, which is a
// symlink to /private/tmp on macOS, and the process temp dir).
func profilesDump(ws string) string {
	argv := []string{"bash", "-c", "echo hi"}
	var b strings.Builder
	line := func(platform string, mode sandbox.Mode, full []string) {
		fmt.Fprintf(&b, "%-16s %-15s : %s\n", platform, mode, shellQuote(full))
	}
	confined := []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite}
	// The Landlock lines show a policy as Validate grants it: a
	// workspace-write root pinned to its device and inode (example values).
	validated := func(m sandbox.Mode) sandbox.Policy {
		p := sandbox.Policy{Mode: m, WorkspaceRoot: ws}
		if m == sandbox.WorkspaceWrite {
			p.WorkspaceID = exampleWorkspaceID
		}
		return p
	}
	for _, m := range confined {
		line("linux/bwrap", m, sandbox.Wrap([]string{"bwrap"}, sandbox.BwrapArgs(sandbox.Policy{Mode: m, WorkspaceRoot: ws}), argv))
	}
	for _, m := range confined {
		line("linux/landlock", m, sandbox.Wrap([]string{"landlock-run"}, sandbox.LandlockArgs(validated(m)), argv))
	}
	darwinRoots := func(m sandbox.Mode) []string {
		if m != sandbox.WorkspaceWrite {
			return []string{}
		}
		return []string{ws, "/private/tmp", exampleDarwinTempDir}
	}
	for _, m := range confined {
		line("darwin/seatbelt", m, sandbox.Wrap([]string{"sandbox-exec"}, sandbox.SeatbeltArgs(m, darwinRoots(m)), argv))
	}
	for _, m := range confined {
		line("win32/acl", m, sandbox.Wrap([]string{"node", "runner.js"}, sandbox.WindowsACLArgs(sandbox.Policy{Mode: m, WorkspaceRoot: ws}, exampleWindowsTempDir, nil), argv))
	}
	b.WriteString("\n")
	for _, m := range confined {
		fmt.Fprintf(&b, "seatbelt profile, %s:\n  %s\n", m, sandbox.SeatbeltProfile(m, darwinRoots(m)))
	}
	b.WriteString("\nopt-in hardening (sandbox.Config.Harden, inproc Options.Harden; ours, beyond upstream, off by default):\n")
	for _, m := range confined {
		line("linux/bwrap", m, sandbox.Wrap([]string{"bwrap"}, sandbox.HardenedBwrapArgs(sandbox.Policy{Mode: m, WorkspaceRoot: ws}, "<bin>/landlock-run", true), argv))
	}
	for _, m := range confined {
		line("linux/landlock", m, sandbox.Wrap([]string{"landlock-run"}, sandbox.HardenedLandlockArgs(validated(m)), argv))
	}
	b.WriteString("  every backend: the command starts without the secret variables of its environment (sandbox.SecretName)\n")
	b.WriteString("\ndepartures from upstream in these profiles (each found by the escape corpus, harness/escape):\n")
	for _, d := range profileDepartures {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	return strings.ReplaceAll(b.String(), exampleWorkspaceID.String(), "<dev>:<ino>")
}

// profileDepartures names what our Linux profiles add to upstream's, and why
// (docs/stack.md's departures list says the same at length).
var profileDepartures = []string{
	"bwrap --unshare-pid: without a PID namespace, root wrote anywhere through /proc/$PPID/root (bwrap's monitor) or a sibling sandbox's /proc/<pid>/root",
	"bwrap --cap-drop ALL: root kept every capability, remounted / read-write and opened outside files by handle",
	"bwrap --remount-ro /proc: root wrote /proc/sys/kernel/core_pattern and other processes' /proc files",
	"bwrap --bind-fd 4 <ws>: the workspace is bound through the directory sandbox.Validate opened and identified, inherited as descriptor 4 (3 closed), not by path (and, hardened, --ro-bind-fd 5 <ws>/.git, opened beneath it): bwrap followed a workspace renamed, exchanged or whose parent was swapped for a link after the check, and wrote outside",
	"landlock-run --rw grants no character or block device creation: root made the host's disk node in the workspace",
	"landlock-run and the in-process path drop every capability before the command starts: root kept CapEff 000001fffeffffff (chown, chattr +i)",
	"landlock-run and the in-process path open every rule path without following a symlink, and --rw-inode pins the workspace root to the device and inode sandbox.Validate saw (<dev>:<ino>): a confined command swapped the workspace for a link and later calls' grants landed outside",
	"workspace-write refuses a root that makes confinement meaningless (/, anything in /etc /usr /boot /var/spool /proc /sys /dev /bin /sbin /lib*, the roots of the other system trees, the home directory or above it): sandbox.MeaninglessRoot",
	"workspace-write refuses a root that holds a mount point or is, through a bind mount, such a directory: a bind mount of /etc inside the workspace granted /etc on both backends: sandbox.MountedRoot",
}
