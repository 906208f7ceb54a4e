//go:build unix

package session

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// withLock runs fn holding an exclusive flock(2) on f.
func withLock(f *os.File, fn func() error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = unix.Flock(int(fd), unix.LOCK_EX)
			if lerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if lerr != nil {
		return fmt.Errorf("session: lock %s: %w", f.Name(), lerr)
	}
	defer rc.Control(func(fd uintptr) { _ = unix.Flock(int(fd), unix.LOCK_UN) })
	return fn()
}

// writeOnce writes b with exactly one write(2) (os.File.Write would loop on a
// short write and could let another appender's bytes in between).
func writeOnce(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		for {
			n, werr = unix.Write(int(fd), b)
			if werr != unix.EINTR {
				return true
			}
		}
	}); err != nil {
		return 0, err
	}
	if n < 0 {
		n = 0
	}
	return n, werr
}
