//go:build linux

package llsys

import (
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABIVersion returns the Landlock ABI the kernel supports (1 and up), or an
// error (ENOSYS: not built in; EOPNOTSUPP: disabled at boot).
func ABIVersion() (int, error) { return ll.LandlockGetABIVersion() }

// CreateRuleset creates a ruleset handling the filesystem rights handled and
// the scopes scoped (0 for none; scopes need ABI 6).
func CreateRuleset(handled, scoped uint64) (int, error) {
	return ll.LandlockCreateRuleset(&ll.RulesetAttr{HandledAccessFS: handled, Scoped: scoped}, 0)
}

// FileID names a file by device and inode number, as fstat reports them.
type FileID struct{ Dev, Ino uint64 }

// OpenPath opens path with O_PATH|O_CLOEXEC through openat2 with
// RESOLVE_NO_SYMLINKS: no component may be a symlink (magic links of /proc
// included), so a path another process swapped for a link fails with ELOOP
// instead of opening the link's target. It reports the opened file's device
// and inode and whether it is a directory. A kernel without openat2 (before
// 5.6, or a seccomp filter that hides it) fails with ENOSYS: nothing falls
// back to a resolution that follows links.
func OpenPath(path string) (fd int, id FileID, isDir bool, err error) {
	fd, err = unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return -1, FileID{}, false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, FileID{}, false, err
	}
	return fd, FileID{Dev: st.Dev, Ino: st.Ino}, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// AddPathBeneath allows the rights allowed beneath the file or directory parentFD.
func AddPathBeneath(rulesetFD, parentFD int, allowed uint64) error {
	return ll.LandlockAddPathBeneathRule(rulesetFD, &ll.PathBeneathAttr{AllowedAccess: allowed, ParentFd: parentFD}, 0)
}

// SetNoNewPrivs sets no_new_privs on the calling thread.
func SetNoNewPrivs() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }

// RestrictSelf enforces rulesetFD on the calling thread (no TSYNC).
func RestrictSelf(rulesetFD int) error { return ll.LandlockRestrictSelf(rulesetFD, 0) }

// ClearAmbientCaps empties the calling thread's ambient capability set.
// A kernel without ambient capabilities (before 4.3, EINVAL) has none to clear.
func ClearAmbientCaps() error {
	err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	if err == unix.EINVAL {
		return nil
	}
	return err
}

// DropBoundingCap removes capability c from the calling thread's bounding
// set (needs CAP_SETPCAP); EINVAL means c is beyond the kernel's last
// capability.
func DropBoundingCap(c int) error { return unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0) }

// CapSetpcap is the number of CAP_SETPCAP, which dropping from the bounding set needs.
const CapSetpcap = unix.CAP_SETPCAP

// EffectiveCap reports whether capability c is in the calling thread's
// effective set.
func EffectiveCap(c int) (bool, error) {
	var data [2]unix.CapUserData
	if err := unix.Capget(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0]); err != nil {
		return false, err
	}
	return data[c/32].Effective&(1<<(c%32)) != 0, nil
}

// ClearCaps empties the calling thread's effective, permitted and
// inheritable capability sets (capset with all zero).
func ClearCaps() error {
	var data [2]unix.CapUserData
	return unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0])
}

// Close closes fd.
func Close(fd int) error { return unix.Close(fd) }

// Gettid returns the calling thread's id.
func Gettid() int { return unix.Gettid() }
