package landlock

import (
	"fmt"
	"syscall"

	"github.com/dshsim/dshsim/sandbox/internal/llsys"
)

// DropCapabilities empties every capability set of the calling OS thread
// before it is restricted, so that the command started from it (which
// inherits the thread's credentials) runs with none: ambient first, then the
// bounding set capability by capability, then effective, permitted and
// inheritable. Ours, not upstream's: Landlock governs file access, not what
// a capability grants, and the escape corpus saw a root command confined by
// the runner keep CapEff 000001fffeffffff, chown outside files and set the
// immutable flag (it could as well load a kernel module or reboot the host).
// bwrap's profile drops them too (--cap-drop ALL).
//
// The bounding set can only be narrowed with CAP_SETPCAP; a thread without
// it (any unprivileged caller) keeps its bounding set but has nothing
// effective, permitted, inheritable or ambient, and no_new_privs, set next,
// keeps execve from granting anything (no setuid, no file capabilities).
// Every failure is an error: the caller fails closed.
func DropCapabilities() error {
	if err := llsys.ClearAmbientCaps(); err != nil {
		return fmt.Errorf("clear the ambient set: %s", Strerror(err))
	}
	setpcap, err := llsys.EffectiveCap(llsys.CapSetpcap)
	if err != nil {
		return fmt.Errorf("read the effective set: %s", Strerror(err))
	}
	if setpcap {
		for c := 0; ; c++ {
			err := llsys.DropBoundingCap(c)
			if err == syscall.EINVAL && c > 0 {
				break // past the kernel's last capability
			}
			if err != nil {
				return fmt.Errorf("drop capability %d from the bounding set: %s", c, Strerror(err))
			}
		}
	}
	if err := llsys.ClearCaps(); err != nil {
		return fmt.Errorf("clear the effective, permitted and inheritable sets: %s", Strerror(err))
	}
	return nil
}
