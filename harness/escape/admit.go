package escape

import (
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/sandbox"
)

// Temp areas a backend gives workspace-write (package sandbox, Profiles: bwrap
// mounts a fresh tmpfs at /tmp, Landlock grants the host /tmp wholesale).
const (
	// TempFresh is bwrap's fresh tmpfs on /tmp: writes vanish, host /tmp is untouched.
	TempFresh = "fresh-tmpfs"
	// TempHost is Landlock's grant of the host /tmp wholesale.
	TempHost = "host-tmp"
)

// Report is what a backend says about its own enforcement: the only thing
// that may admit an attempt getting through.
type Report struct {
	// Enforcement is full or partial (from the probe).
	Enforcement sandbox.Enforcement
	// Probe is the probe's own words (the Landlock runner's stdout line), or "".
	Probe string
	// ABI is the Landlock ABI the runner governs (min of kernel and cap), 0 for other backends.
	ABI int
	// TempArea is TempFresh or TempHost.
	TempArea string
	// Ungoverned is the backend's own list of file effects it cannot govern
	// (sandbox.ConfinedArgv.Ungoverned), each "<effect>: <why>".
	Ungoverned []string
	// Isolated is what the backend claims to keep the command from beyond
	// files (sandbox.ConfinedArgv.Isolated), each "<effect>: <how>".
	Isolated []string
}

// Admit says whether a got-through of an attempt of class c (with its
// metadata or isolation effect, if any) under mode m is admitted by the
// backend's report, and why. A metadata change is admitted only when the
// backend's own Ungoverned list names that effect; an isolation effect is
// admitted unless the backend's Isolated list claims it (then getting
// through is a broken claim); a write beneath the workspace's .git (class
// git, run with the hardening) is admitted only by an Ungoverned entry
// "git-dir"; a change after the call returned (class late) is never
// admitted, nor is anything a hostile recording (class recording) did to
// the host. notice says whether the runner's
// partial-enforcement notice was on stderr for that run. Pure.
func Admit(c Class, effect string, m sandbox.Mode, r Report, notice bool) (bool, string) {
	partial := r.Enforcement == sandbox.Partial
	switch c {
	case ClassMetadata:
		for _, u := range r.Ungoverned {
			if effect != "" && strings.HasPrefix(u, effect+":") {
				return true, fmt.Sprintf("the backend lists it as ungoverned: %q", u)
			}
		}
	case ClassTemp:
		if m == sandbox.WorkspaceWrite && r.TempArea == TempHost {
			return true, "the host /tmp is this backend's temp area under workspace-write (package sandbox, Profiles)"
		}
	case ClassDevice:
		return true, "devices are not promised by any mode (package sandbox, Modes and promises)"
	case ClassIsolation:
		for _, u := range r.Isolated {
			if effect != "" && strings.HasPrefix(u, effect+":") {
				return false, fmt.Sprintf("NOT ADMITTED: the backend claims to isolate it: %q", u)
			}
		}
		return true, "no mode promises to keep a command from the harness (package sandbox, Modes and promises); the opt-in hardening (sandbox.Config.Harden) does"
	case ClassGit:
		for _, u := range r.Isolated {
			if strings.HasPrefix(u, sandbox.IsolatedGitDir+":") {
				return false, fmt.Sprintf("NOT ADMITTED: the backend claims to keep it read-only: %q", u)
			}
		}
		for _, u := range r.Ungoverned {
			if strings.HasPrefix(u, sandbox.IsolatedGitDir+":") {
				return true, fmt.Sprintf("the backend lists it as ungoverned: %q", u)
			}
		}
	case ClassLate:
		return false, "NOT ADMITTED: nothing a call starts may outlive it (package sandbox/spawn, Nothing outlives its call)"
	case ClassRecording:
		return false, "NOT ADMITTED: a recording is contained: nothing it runs may reach the host (docs/replay.md, A recording is contained)"
	case ClassInode:
		return true, "writing a workspace name is permitted; its inode was linked outside before the call"
	case ClassTruncate:
		if partial && notice && r.ABI > 0 && r.ABI < 3 {
			return true, fmt.Sprintf("reported partial, and ABI %d has no TRUNCATE right (ABI 3)", r.ABI)
		}
	case ClassIoctl:
		if partial && notice && r.ABI > 0 && r.ABI < 5 {
			return true, fmt.Sprintf("reported partial, and ABI %d has no IOCTL_DEV right (ABI 5)", r.ABI)
		}
	}
	if partial {
		return false, fmt.Sprintf("NOT ADMITTED: reported partial at ABI %d, which admits only truncate before ABI 3 and device ioctl before ABI 5", r.ABI)
	}
	return false, "NOT ADMITTED: reported " + string(r.Enforcement)
}
