package spawn

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeOnExecListed marks close-on-exec every descriptor from 3 up that dir
// (/proc/self/fd, /dev/fd) lists.
func closeOnExecListed(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("spawn: cannot list open descriptors to keep them from a confined command: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			continue // closed meanwhile (the directory's own descriptor)
		}
		if flags&unix.FD_CLOEXEC == 0 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
				return fmt.Errorf("spawn: cannot keep descriptor %d from a confined command: %w", fd, err)
			}
		}
	}
	return nil
}
