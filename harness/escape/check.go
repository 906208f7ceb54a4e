package escape

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Entry is what the host sees of one path: its type, mode, owner, size,
// content hash, modification time, symlink target, device number, inode
// flags and extended attributes.
type Entry struct {
	Kind   string // file, dir, symlink, fifo, char, block, socket
	Perm   fs.FileMode
	UID    uint32
	GID    uint32
	Size   int64
	SHA256 string
	MTime  int64 // nanoseconds
	Link   string
	Rdev   uint64
	// Flags are the inode flags (FS_IOC_GETFLAGS: immutable, append-only,
	// no-dump, ...) of a file or directory, "" where the file system keeps
	// none or the kind has none.
	Flags string
	// Xattrs are every extended attribute with its value, in every namespace
	// this process can list (user.*, and trusted.* and security.* for root):
	// name="value" pairs, sorted.
	Xattrs string
}

// Snapshot maps "<label>/<relative path>" to what the host saw there.
type Snapshot map[string]Entry

// Take walks each labelled root (label -> absolute directory) and records
// every entry under it, the root itself included, skipping the relative paths
// in skip (and everything beneath them). Missing roots are recorded as absent.
func Take(roots map[string]string, skip []string) (Snapshot, error) {
	s := Snapshot{}
	for label, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == root {
					return nil
				}
				return err
			}
			rel, _ := filepath.Rel(root, p)
			key := label + "/" + filepath.ToSlash(rel)
			if rel == "." {
				key = label
			}
			for _, sk := range skip {
				if key == sk {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
			}
			e, err := stat(p)
			if err != nil {
				return err
			}
			s[key] = e
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", root, err)
		}
	}
	return s, nil
}

func stat(p string) (Entry, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return Entry{}, err
	}
	e := Entry{Perm: fs.FileMode(st.Mode & 0o7777), UID: st.Uid, GID: st.Gid, Size: st.Size,
		MTime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, Rdev: st.Rdev}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		e.Kind = "file"
		data, err := os.ReadFile(p)
		if err != nil {
			return Entry{}, err
		}
		sum := sha256.Sum256(data)
		e.SHA256 = hex.EncodeToString(sum[:])
	case syscall.S_IFDIR:
		e.Kind = "dir"
	case syscall.S_IFLNK:
		e.Kind = "symlink"
		l, err := os.Readlink(p)
		if err != nil {
			return Entry{}, err
		}
		e.Link = l
	case syscall.S_IFIFO:
		e.Kind = "fifo"
	case syscall.S_IFCHR:
		e.Kind = "char"
	case syscall.S_IFBLK:
		e.Kind = "block"
	case syscall.S_IFSOCK:
		e.Kind = "socket"
	}
	if e.Kind == "file" || e.Kind == "dir" {
		f, err := inodeFlags(p)
		if err != nil {
			return Entry{}, fmt.Errorf("inode flags of %s: %w", p, err)
		}
		e.Flags = f
	}
	x, err := xattrs(p)
	if err != nil {
		return Entry{}, fmt.Errorf("extended attributes of %s: %w", p, err)
	}
	e.Xattrs = x
	return e, nil
}

// inodeFlags reads the inode flags of a file or directory (opened read-only,
// without following a symlink or blocking), as hex; "" where the file system
// keeps none.
func inodeFlags(p string) (string, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	v, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
	switch {
	case errors.Is(err, unix.ENOTTY), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
		return "", nil
	case err != nil:
		return "", err
	}
	return fmt.Sprintf("%#x", uint32(v)), nil
}

// xattrs lists every extended attribute of p (not following a symlink) with
// its value, sorted by name; "" for none, or where the file system keeps none.
func xattrs(p string) (string, error) {
	size, err := unix.Llistxattr(p, nil)
	if errors.Is(err, unix.ENOTSUP) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if size == 0 {
		return "", nil
	}
	buf := make([]byte, size)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		return "", err
	}
	var pairs []string
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		vsize, err := unix.Lgetxattr(p, name, nil)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		val := make([]byte, vsize)
		if vsize > 0 {
			m, err := unix.Lgetxattr(p, name, val)
			if err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			val = val[:m]
		}
		pairs = append(pairs, fmt.Sprintf("%s=%q", name, val))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ","), nil
}

// Change is one difference between two snapshots.
type Change struct {
	// Path is the labelled path.
	Path string
	// What is "created", "removed", or a comma-separated list of changed
	// aspects (kind, content, mode, owner, mtime, link, rdev, flags, xattr),
	// or what the harness saw (a path under "harness/": a signal, a
	// connection, a secret in the output).
	What string
}

// String renders "path: what".
func (c Change) String() string { return c.Path + ": " + c.What }

// Diff lists the changes from before to after, sorted by path.
func Diff(before, after Snapshot) []Change {
	var out []Change
	for k, b := range before {
		a, ok := after[k]
		if !ok {
			out = append(out, Change{k, "removed"})
			continue
		}
		var what []string
		if a.Kind != b.Kind {
			what = append(what, "kind")
		}
		if a.SHA256 != b.SHA256 || a.Size != b.Size {
			what = append(what, "content")
		}
		if a.Perm != b.Perm {
			what = append(what, "mode")
		}
		if a.UID != b.UID || a.GID != b.GID {
			what = append(what, "owner")
		}
		if a.MTime != b.MTime {
			what = append(what, "mtime")
		}
		if a.Link != b.Link {
			what = append(what, "link")
		}
		if a.Rdev != b.Rdev {
			what = append(what, "rdev")
		}
		if a.Flags != b.Flags {
			what = append(what, "flags")
		}
		if a.Xattrs != b.Xattrs {
			what = append(what, "xattr")
		}
		if len(what) > 0 {
			out = append(out, Change{k, strings.Join(what, ",")})
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, Change{k, "created"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
