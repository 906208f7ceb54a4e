package sandbox

// LandlockPartialNotice is the runner's VERBATIM informational stderr line.
const LandlockPartialNotice = "landlock-run: partial enforcement (older Landlock ABI)"

// Dialect is one backend's classification facts: the denial signatures it
// produces when the kernel blocks a file effect, and the evidence that its
// runner failed before running the command.
type Dialect struct {
	// DenialSignatures are case-insensitive stderr substrings.
	DenialSignatures []string
	// RunnerFailureRules are checked in order by [ClassifyRunnerFailure].
	RunnerFailureRules []RunnerFailureRule
	// Ungoverned lists file effects the backend cannot govern at all (see
	// [landlockUngoverned]); it is copied into every [ConfinedArgv].
	Ungoverned []string
}

// landlockUngoverned is what no Landlock ABI governs: Landlock's file rights
// cover creating, writing, truncating, renaming, linking and removing, but not
// a file's metadata. A command confined by Landlock can still change the mode,
// owner, times, extended attributes and inode flags of any file it can name,
// as far as its credentials allow (chmod and chattr on files it owns, chown
// to its own groups, utimes, setxattr in the user namespace; the runner and
// the in-process path drop every capability, so root gets no further than
// any owner: no immutable or append-only flag, no trusted.* attribute, no
// chown to another user). The escape corpus (harness/escape) shows each of
// them going through, and this list is the backend's admission of it. The
// chattr entry is ours too: FS_IOC_SETFLAGS on a regular file is an ioctl no
// Landlock right covers (LANDLOCK_ACCESS_FS_IOCTL_DEV is for device files
// only), and the corpus saw an owner set the no-dump flag on an outside file.
// bwrap's read-only mounts refuse all five.
var landlockUngoverned = []string{
	"chmod: file mode changes are not a Landlock right",
	"chown: file owner changes are not a Landlock right",
	"utimes: file time changes are not a Landlock right",
	"setxattr: extended attribute changes are not a Landlock right",
	"chattr: inode flag changes (FS_IOC_SETFLAGS on a regular file) are not a Landlock right",
}

// --8<-- [start:dialects]
// DialectOf returns the VERBATIM dialect of a built-in backend (a fresh copy)
// and whether the name is known. runner-command's rule depends on its
// configured signatures and is built by the provider.
func DialectOf(backend string) (Dialect, bool) {
	switch backend {
	case BackendBwrap:
		return Dialect{[]string{"read-only file system"}, []RunnerFailureRule{{FatalSignatures: []string{"bwrap: "}}}, nil}, true
	case BackendLandlock:
		return Dialect{[]string{"permission denied"}, []RunnerFailureRule{{
			AllowedExitCodes:   []int{125},
			FatalSignatures:    []string{"landlock-run: "},
			InformationalLines: []string{LandlockPartialNotice},
		}}, append([]string(nil), landlockUngoverned...)}, true
	case BackendSeatbelt:
		return Dialect{[]string{"operation not permitted"}, []RunnerFailureRule{{FatalSignatures: []string{"sandbox-exec: "}}}, nil}, true
	case BackendWindowsACL:
		return Dialect{[]string{"access is denied", "access to the path", "permission denied", "operation not permitted"},
			[]RunnerFailureRule{{AllowedExitCodes: []int{127}, FatalSignatures: []string{"windows-acl-run: "}}}, nil}, true
	}
	return Dialect{}, false
}

// --8<-- [end:dialects]

// runnerCommandDenials is the denial dialect of an operator runnerCommand
// (both Linux dialects).
func runnerCommandDenials() []string { return []string{"read-only file system", "permission denied"} }

// staticEnforcement is the enforcement of a backend selected without probing.
func staticEnforcement(backend string) Enforcement {
	if backend == BackendWindowsACL {
		return Partial
	}
	return Full
}

// --8<-- [start:backend-chain]
// Chain returns the backend chain of a platform (GOOS names; "win32" is
// accepted as an alias of windows): linux bwrap then landlock, darwin
// seatbelt, windows windows-acl, anything else none.
func Chain(platform string) []string {
	switch platform {
	case "linux":
		return []string{BackendBwrap, BackendLandlock}
	case "darwin":
		return []string{BackendSeatbelt}
	case "windows", "win32":
		return []string{BackendWindowsACL}
	}
	return []string{}
}

// --8<-- [end:backend-chain]
