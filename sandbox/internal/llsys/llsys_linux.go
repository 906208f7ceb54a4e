//go:build linux

package llsys

import (
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABIVersion returns the Landlock ABI the kernel supports (1 and up), or an
// error (ENOSYS: not built in; EOPNOTSUPP: disabled at boot).
func ABIVersion() (int, error) { return ll.LandlockGetABIVersion() }

// CreateRuleset creates a ruleset handling the filesystem rights handled.
func CreateRuleset(handled uint64) (int, error) {
	return ll.LandlockCreateRuleset(&ll.RulesetAttr{HandledAccessFS: handled}, 0)
}

// OpenPath opens path with O_PATH|O_CLOEXEC and reports whether it is a directory.
func OpenPath(path string) (fd int, isDir bool, err error) {
	fd, err = unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, false, err
	}
	return fd, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// AddPathBeneath allows the rights allowed beneath the file or directory parentFD.
func AddPathBeneath(rulesetFD, parentFD int, allowed uint64) error {
	return ll.LandlockAddPathBeneathRule(rulesetFD, &ll.PathBeneathAttr{AllowedAccess: allowed, ParentFd: parentFD}, 0)
}

// SetNoNewPrivs sets no_new_privs on the calling thread.
func SetNoNewPrivs() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }

// RestrictSelf enforces rulesetFD on the calling thread (no TSYNC).
func RestrictSelf(rulesetFD int) error { return ll.LandlockRestrictSelf(rulesetFD, 0) }

// Close closes fd.
func Close(fd int) error { return unix.Close(fd) }

// Gettid returns the calling thread's id.
func Gettid() int { return unix.Gettid() }
