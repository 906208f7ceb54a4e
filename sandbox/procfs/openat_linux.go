package procfs

import (
	"io/fs"
	"syscall"
)

// readAt reads the whole file at rel under the directory descriptor dir
// into buf (grown when it fills): an open, reads up to the end, a close.
func readAt(dir int, rel string, buf []byte) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Openat(dir, rel, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	defer syscall.Close(fd)
	buf = buf[:cap(buf)]
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf)+1)...)
		}
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: rel, Err: err}
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
}
