//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
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
// walked, the directory it ended on, open (O_PATH), and that directory's
// device and inode: the one walk decides, so a component swapped for a link
// meanwhile is either followed as the check saw it or not at all, never
// checked on one name and resolved on another. The caller closes the
// directory.
func resolveRoot(p string, areas []string) (string, *os.File, FileID, error) {
	path, fd, id, err := walkRoot(p, areas)
	if err != nil {
		return "", nil, FileID{}, err
	}
	return path, os.NewFile(uintptr(fd), path), id, nil
}

// walkRoot is resolveRoot's walk; it returns the descriptor it ended on,
// open, or closes every descriptor it opened.
func walkRoot(p string, areas []string) (string, int, FileID, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", -1, FileID{}, err
	}
	keep := false
	defer func() {
		if !keep {
			unix.Close(fd)
		}
	}()
	cur, todo, links := "/", splitPath(p), 0
	for len(todo) > 0 {
		comp := todo[0]
		todo = todo[1:]
		next := filepath.Join(cur, comp)
		nfd, err := unix.Openat(fd, comp, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", -1, FileID{}, &os.PathError{Op: "open", Path: next, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(nfd, &st); err != nil {
			unix.Close(nfd)
			return "", -1, FileID{}, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			target, err := readlinkFD(nfd)
			unix.Close(nfd)
			if err != nil {
				return "", -1, FileID{}, &os.PathError{Op: "readlink", Path: next, Err: err}
			}
			if inArea(next, areas) {
				return "", -1, FileID{}, &errRedirect{next}
			}
			if links++; links > maxLinks {
				return "", -1, FileID{}, &os.PathError{Op: "resolve", Path: p, Err: unix.ELOOP}
			}
			todo = append(splitPath(target), todo...)
			if filepath.IsAbs(target) {
				unix.Close(fd)
				if fd, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
					return "", -1, FileID{}, err
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
		return "", -1, FileID{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "", -1, FileID{}, &os.PathError{Op: "resolve", Path: cur, Err: unix.ENOTDIR}
	}
	keep = true
	return cur, fd, FileID{Dev: st.Dev, Ino: st.Ino}, nil
}

// resolvePlain is resolveRoot's answer in one openat2 when no component
// of the absolute path p is a symlink (RESOLVE_NO_SYMLINKS refuses any,
// magic links included): the walk would follow none, so it would end on the
// directory this open reaches, at the path p cleaned (".." is then the
// parent on disk as well as in the spelling); that directory is returned
// open (O_PATH), for the caller to close, with its device and inode.
// ok=false for anything else (a symlink met, a missing component, not a
// directory, a kernel before openat2): the walk then decides, and names
// what it met.
func resolvePlain(p string) (string, *os.File, FileID, bool) {
	if !filepath.IsAbs(p) {
		return "", nil, FileID{}, false
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return "", nil, FileID{}, false
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return "", nil, FileID{}, false
	}
	p = filepath.Clean(p)
	return p, os.NewFile(uintptr(fd), p), FileID{Dev: st.Dev, Ino: st.Ino}, true
}

// openGitDir opens the workspace's .git beneath root, the workspace root
// the check opened, for the hardened bwrap profile to bind read-only: O_PATH
// through openat2 with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS, a directory
// or a file (a worktree's .git). nil when p is not workspace-write or the
// workspace has no .git. A .git that is a symbolic link, or that cannot be
// opened, is refused (wrapping [ErrBadInput]): bound by descriptor, the
// protection covers what was opened, and a link there is not followed.
func openGitDir(p Policy, root *os.File) (*os.File, error) {
	if p.Mode != WorkspaceWrite || root == nil {
		return nil, nil
	}
	fd, err := unix.Openat2(int(root.Fd()), ".git", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS})
	git := filepath.Join(p.WorkspaceRoot, ".git")
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("%w: the workspace's %s is a symbolic link; the hardening binds the .git it opens read-only through its descriptor and does not follow a link there, so the call is not run", ErrBadInput, git)
	case err != nil:
		return nil, fmt.Errorf("%w: the workspace's %s cannot be opened to bind it read-only (%v), so the call is not run", ErrBadInput, git, err)
	}
	return os.NewFile(uintptr(fd), git), nil
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
