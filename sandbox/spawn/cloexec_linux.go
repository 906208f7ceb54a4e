//go:build linux

package spawn

import "golang.org/x/sys/unix"

// closeOnExecAbove2 marks every descriptor from 3 up close-on-exec in one
// call (close_range(2), Linux 5.11), falling back to the /proc/self/fd walk.
func closeOnExecAbove2() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	return closeOnExecListed("/proc/self/fd")
}
