//go:build linux

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// maxLinks bounds the symlinks one resolution follows, as the kernel's
// path walk does (MAXSYMLINKS).
const maxLinks = 40

// errRedirect is a symlink inside a temp area met while resolving a root.
type errRedirect struct{ link string }

func (e *errRedirect) Error() string { return "symlink " + e.link + " inside a temp area" }

// resolveRoot resolves the absolute path p component by component through
// descriptors (openat with O_NOFOLLOW), following symlinks as realpath does
// except one that lies inside areas ([RedirectingSymlink]'s rule), which
// fails with *errRedirect naming it. It returns the canonical path it
// walked, and the device and inode of the directory it ended on: the one
// walk decides, so a component swapped for a link meanwhile is either
// followed as the check saw it or not at all, never checked on one name and
// resolved on another.
func resolveRoot(p string, areas []string) (string, FileID, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", FileID{}, err
	}
	defer func() { unix.Close(fd) }()
	cur, todo, links := "/", splitPath(p), 0
	for len(todo) > 0 {
		comp := todo[0]
		todo = todo[1:]
		next := filepath.Join(cur, comp)
		nfd, err := unix.Openat(fd, comp, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", FileID{}, &os.PathError{Op: "open", Path: next, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(nfd, &st); err != nil {
			unix.Close(nfd)
			return "", FileID{}, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			target, err := readlinkFD(nfd)
			unix.Close(nfd)
			if err != nil {
				return "", FileID{}, &os.PathError{Op: "readlink", Path: next, Err: err}
			}
			if inArea(next, areas) {
				return "", FileID{}, &errRedirect{next}
			}
			if links++; links > maxLinks {
				return "", FileID{}, &os.PathError{Op: "resolve", Path: p, Err: unix.ELOOP}
			}
			todo = append(splitPath(target), todo...)
			if filepath.IsAbs(target) {
				unix.Close(fd)
				if fd, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
					return "", FileID{}, err
				}
				cur = "/"
			}
			continue
		}
		unix.Close(fd)
		fd, cur = nfd, next // filepath.Join made ".." the parent
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", FileID{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "", FileID{}, &os.PathError{Op: "resolve", Path: cur, Err: unix.ENOTDIR}
	}
	return cur, FileID{Dev: st.Dev, Ino: st.Ino}, nil
}

// splitPath is p's components, without empty ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// readlinkFD reads the target of the symlink opened (O_PATH|O_NOFOLLOW) as fd.
func readlinkFD(fd int) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// isRedirect reports whether err is a temp-area symlink met by resolveRoot.
func isRedirect(err error) (string, bool) {
	var r *errRedirect
	if errors.As(err, &r) {
		return r.link, true
	}
	return "", false
}

// mountTable is this process's mount table.
func mountTable() ([]procfs.Mount, error) { return procfs.Proc.MountInfo("self") }
