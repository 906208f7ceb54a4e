package sandbox

import "strings"

// Backend names, as [ConfinedArgv.Backend] reports them.
const (
	BackendBwrap         = "bwrap"
	BackendLandlock      = "landlock"
	BackendSeatbelt      = "seatbelt"
	BackendWindowsACL    = "windows-acl"
	BackendRunnerCommand = "runner-command"
)

// BwrapArgs is the bwrap profile (without the program and without "--"):
// read-only bind of /, fresh /dev, a fresh read-only /proc of the sandbox's
// own PID namespace, die with parent, no capabilities; workspace-write adds a
// fresh tmpfs at /tmp and then binds the workspace writable (in that order,
// so a workspace under /tmp is bound on top of the tmpfs) through the
// directory [Validate] opened: --bind-fd 4 <root>, descriptor 4 being the
// first of [ConfinedArgv.Files] (see [ConfinedArgv.Inherit]). Any mode
// other than workspace-write is treated as read-only.
//
// The workspace is bound by descriptor, not by path (ours, not upstream's):
// bwrap resolves a path when it mounts, after the check, and a workspace
// renamed and replaced by a link meanwhile (its parent swapped, or the two
// exchanged atomically) was bound there instead: through the stack's
// default on a host with bwrap, 76 of 131 leaf renames, 131 of 218
// exchanges and 78 of 137 parent swaps that got past the check wrote
// outside. The descriptor is the directory whose device and inode the check
// took; bwrap (0.8.0) reads the descriptor's path when it starts, mounts
// that path once its namespaces are set up, and exits when the mount does
// not show the descriptor's device and inode, so a swap after the check
// changes at most which name the grant appears under, never which directory
// it is, or the call does not run. A bwrap without
// --bind-fd fails its probe, or the call (bwrap: Unknown option); nothing
// falls back to a bind by path.
//
// Three flags are ours, not upstream's, each added after the escape corpus
// (harness/escape) showed a confined command writing outside:
//
// --unshare-pid: without a PID namespace the command sees every host process
// in /proc, among them bwrap's own monitor, which stays in the host's mount
// namespace, and a concurrent sibling sandbox's monitor; as root it opened
// /proc/$PPID/root (or /proc/<sibling>/root) and wrote anywhere on the host
// through it, under a report of full enforcement. In its own PID namespace
// (with the fresh /proc --proc mounts for it) the command sees only the
// sandbox's processes, whose root is the sandbox's read-only view; it cannot
// signal the harness either (its pid does not exist there).
//
// --cap-drop ALL: bwrap run by root keeps every capability inside the
// sandbox, and a confined command then remounted / read-write
// (CAP_SYS_ADMIN) or opened an outside file by handle (CAP_DAC_READ_SEARCH)
// and wrote anywhere. Without root the flag changes nothing (bwrap's user
// namespace grants no capability over the host's mounts).
//
// --remount-ro /proc: bwrap covers /proc/sys read-only only when it looks
// writable to bwrap, which it does not for root without capabilities: root
// then wrote /proc/sys/kernel/core_pattern from a read-only sandbox (a
// "|<program>" pattern runs that program as root, unconfined, on the next
// crash). The PID namespace's /proc still shows the host's sysctls, so the
// whole mount stays read-only: every such write fails with EROFS, in bwrap's
// own denial dialect, as Landlock (which grants nothing under /proc) refuses
// them; reads and the /proc/self/fd magic links (/dev/stderr) still work.
func BwrapArgs(p Policy) []string {
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--die-with-parent", "--unshare-pid", "--cap-drop", "ALL", "--remount-ro", "/proc"}
	if p.Mode == WorkspaceWrite {
		args = append(args, "--tmpfs", "/tmp", "--bind-fd", pinnedFD(0), p.WorkspaceRoot)
	}
	return args
}

// HidesWorkdir reports whether the confinement c hides the working directory
// dir (canonicalised here): bwrap's profile, and an operator runner given
// it, cover /tmp with a fresh tmpfs in workspace-write, so a dir under /tmp
// and not under the workspace root does not exist in the sandbox, and bwrap
// then silently starts the command in $HOME or / instead.
func (c ConfinedArgv) HidesWorkdir(dir string) bool {
	return (c.Backend == BackendBwrap || c.Backend == BackendRunnerCommand) && bwrapHidesWorkdir(c.Policy, canonicalPath(dir))
}

// bwrapHidesWorkdir reports whether the bwrap profile for p hides the
// working directory dir: in workspace-write a fresh tmpfs covers /tmp, so a
// dir under /tmp that is not under the workspace root (re-bound on top) does
// not exist in the sandbox, and bwrap then silently starts the command in
// $HOME or / instead. It is lexical: pass canonical absolute paths.
func bwrapHidesWorkdir(p Policy, dir string) bool {
	return p.Mode == WorkspaceWrite && beneath(dir, "/tmp") && !beneath(dir, p.WorkspaceRoot)
}

// beneath reports whether path is root or lies under it (lexically).
func beneath(path, root string) bool {
	return path == root || root == "/" || strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/")
}

// LandlockGrants is the Landlock runner's grant list for p: read-only / and
// writable /dev/null (the file, never /dev, so /dev/shm stays closed); in
// workspace-write also /tmp and the workspace root.
func LandlockGrants(p Policy) (readOnly, readWrite []string) {
	readOnly, readWrite = []string{"/"}, []string{"/dev/null"}
	if p.Mode == WorkspaceWrite {
		readWrite = append(readWrite, "/tmp", p.WorkspaceRoot)
	}
	return readOnly, readWrite
}

// LandlockArgs is the Landlock runner profile for p (without the program
// and "--"): every --ro grant of [LandlockGrants] first, then every --rw
// grant, each in order. A validated workspace-write policy pins its
// workspace root: "--rw-inode <root> <dev>:<ino>" ([Policy.WorkspaceID]),
// which the runner refuses to grant when the root, opened without following
// a symlink, is another directory than the one [Validate] saw.
func LandlockArgs(p Policy) []string {
	readOnly, readWrite := LandlockGrants(p)
	args := []string{}
	for _, r := range readOnly {
		args = append(args, "--ro", r)
	}
	for _, r := range readWrite {
		if p.Mode == WorkspaceWrite && r == p.WorkspaceRoot && p.WorkspaceID != (FileID{}) {
			args = append(args, "--rw-inode", r, p.WorkspaceID.String())
			continue
		}
		args = append(args, "--rw", r)
	}
	return args
}

// seatbeltReadOnlyProfile is the VERBATIM read-only Seatbelt profile.
const seatbeltReadOnlyProfile = `(version 1) (allow default) (deny file-write*) (allow file-write* (literal "/dev/null"))`

// SeatbeltProfile is the SBPL profile for mode: the read-only profile, plus
// for workspace-write one allow form over roots (normally the workspace, /tmp and the process temp dir, canonicalised).
func SeatbeltProfile(mode Mode, roots []string) string {
	if mode != WorkspaceWrite {
		return seatbeltReadOnlyProfile
	}
	forms := make([]string, 0, len(roots))
	for _, r := range roots {
		forms = append(forms, "(subpath "+sbplString(r)+")")
	}
	return seatbeltReadOnlyProfile + " (allow file-write* " + strings.Join(forms, " ") + ")"
}

// sbplString quotes s as an SBPL string: wrapped in double quotes, with
// backslash and double quote escaped.
func sbplString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// SeatbeltArgs is the sandbox-exec profile arguments: -p <profile>.
func SeatbeltArgs(mode Mode, roots []string) []string {
	return []string{"-p", SeatbeltProfile(mode, roots)}
}

// WindowsSession is the per-session part of the Windows ACL runner profile:
// a private temp directory and the two restricting SIDs the provider grants.
// Deriving them is the Windows provider's job and is not implemented here.
type WindowsSession struct {
	// TempDir is the session's private temp directory.
	TempDir string
	// WriteSID is the per-workspace restricting SID.
	WriteSID string
	// TempWriteSID is the per-session temp restricting SID.
	TempWriteSID string
}

// WindowsACLArgs is the ACL runner profile (without the runner argv and "--"):
// --workspace, --temp, --mode; a workspace-write call with a session adds the
// two SIDs and uses the session's private temp directory.
func WindowsACLArgs(p Policy, tempDir string, session *WindowsSession) []string {
	mode := ReadOnly
	if p.Mode == WorkspaceWrite {
		mode = WorkspaceWrite
	}
	if mode == WorkspaceWrite && session != nil {
		return []string{"--workspace", p.WorkspaceRoot, "--temp", session.TempDir, "--mode", string(mode),
			"--write-sid", session.WriteSID, "--temp-write-sid", session.TempWriteSID}
	}
	return []string{"--workspace", p.WorkspaceRoot, "--temp", tempDir, "--mode", string(mode)}
}

// Wrap joins runner argv, profile args, "--" and the caller's exact argv.
func Wrap(runner, profile, argv []string) []string {
	out := make([]string, 0, len(runner)+len(profile)+1+len(argv))
	out = append(out, runner...)
	out = append(out, profile...)
	out = append(out, "--")
	return append(out, argv...)
}
