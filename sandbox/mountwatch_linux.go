//go:build linux

package sandbox

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// mountWatch keeps this process's mount table between calls of [Validate]
// and reads it again only when the kernel reports that it changed (the
// package doc, The mount table between calls, says why a kept table is
// never older than the table a fresh read would return). Safe for
// concurrent use: one lock spans the checks, the read and the keeping.
type mountWatch struct {
	mu sync.Mutex
	// fd is /proc/self/mountinfo, open since the table was first read (-1:
	// not open); file is its device and inode, ns the mount namespace it
	// reads.
	fd       int
	file, ns FileID
	mounts   []procfs.Mount
	// off: the namespace changed once, so every later table is read afresh.
	off bool

	// reads counts the tables read (kept or not); afterRead, when set, runs
	// after a table was read through fd and before it is kept. Tests only.
	reads     int
	afterRead func()
}

// theMounts is the mount table Validate reads.
var theMounts = &mountWatch{fd: -1}

// mountTable is this process's mount table ([mountWatch.table]). Callers
// must not modify it: it may be the kept one.
func mountTable() ([]procfs.Mount, error) { return theMounts.table() }

// table returns the mount table of this process's mount namespace: the kept
// one when the descriptor it was read through is still the file it opened,
// in the namespace this process is in, and poll reports no change since;
// else one read again through it (or, after a namespace change or any
// failure of those checks, one read afresh, the descriptor closed). A read
// that fails is the error, and nothing is kept.
func (w *mountWatch) table() ([]procfs.Mount, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.off {
		return w.fresh()
	}
	ns, err := statID("/proc/self/ns/mnt")
	if err != nil {
		w.close()
		return w.fresh()
	}
	if w.fd >= 0 {
		if ns != w.ns {
			// Another namespace than the descriptor reads: never cache again.
			w.close()
			w.off = true
			return w.fresh()
		}
		if file, err := fstatID(w.fd); err != nil || file != w.file {
			w.close()
			return w.fresh()
		}
		changed, err := mountsChanged(w.fd)
		if err != nil {
			w.close()
			return w.fresh()
		}
		if !changed {
			return w.mounts, nil
		}
		return w.reread()
	}
	fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return w.fresh()
	}
	file, err := fstatID(fd)
	again, err2 := statID("/proc/self/ns/mnt")
	if err != nil || err2 != nil || again != ns {
		// The namespace changed while the file opened: which one it reads
		// is not known.
		unix.Close(fd)
		w.off = again != ns
		return w.fresh()
	}
	w.fd, w.file, w.ns = fd, file, ns
	return w.reread()
}

// reread reads and parses the table through w.fd from its start and keeps
// it; on a failure the descriptor is closed and nothing is kept.
func (w *mountWatch) reread() ([]procfs.Mount, error) {
	w.reads++
	w.mounts = nil
	text, err := preadAll(w.fd)
	if err == nil && w.afterRead != nil {
		w.afterRead()
	}
	var mounts []procfs.Mount
	if err == nil {
		mounts, err = procfs.ParseMountInfo(text)
	}
	if err != nil {
		w.close()
		return nil, err
	}
	w.mounts = mounts
	return mounts, nil
}

// fresh reads the table anew, keeping nothing.
func (w *mountWatch) fresh() ([]procfs.Mount, error) {
	w.reads++
	return procfs.Proc.MountInfo("self")
}

// close forgets the descriptor and the kept table.
func (w *mountWatch) close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
	}
	w.fd, w.file, w.ns, w.mounts = -1, FileID{}, FileID{}, nil
}

// mountsChanged polls an open mount table file without waiting: the kernel
// reports POLLPRI (with POLLERR) once after every change of the table of
// the namespace the file reads, counted from the file's open or its last
// report. Anything else reported (POLLNVAL: not an open file) is an error.
func mountsChanged(fd int) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
	for {
		_, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, err
		}
		break
	}
	if fds[0].Revents&unix.POLLNVAL != 0 {
		return false, unix.EBADF
	}
	return fds[0].Revents&unix.POLLPRI != 0, nil
}

// preadAll reads the whole file fd from its start.
func preadAll(fd int) (string, error) {
	buf := make([]byte, 0, 16<<10)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Pread(fd, buf[len(buf):cap(buf)], int64(len(buf)))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return "", err
		}
		if n == 0 {
			return string(buf), nil
		}
		buf = buf[:len(buf)+n]
	}
}

// statID is the device and inode of the file at path (symlinks followed).
func statID(path string) (FileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return FileID{}, err
	}
	return FileID{Dev: st.Dev, Ino: st.Ino}, nil
}

// fstatID is the device and inode of the open file fd.
func fstatID(fd int) (FileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return FileID{}, err
	}
	return FileID{Dev: st.Dev, Ino: st.Ino}, nil
}
