package fsobserve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The thin syscall layer: stat with the version token, directory flock,
// link(2) publication and fsync of a directory. Nothing above this file calls
// golang.org/x/sys directly.

// Kind is the type of a filesystem object.
type Kind int

// The kinds a stat can report.
const (
	KindFile Kind = iota + 1
	KindDir
	KindSymlink
	KindOther
)

// Info is one stat of a target (symlinks followed).
type Info struct {
	// Kind is the object type.
	Kind Kind
	// Size is the byte size.
	Size int64
	// Mode is the permission bits (with setuid/setgid/sticky).
	Mode os.FileMode
	// Version is the opaque version token "<dev>:<ino>:<size>:<mtimeNs>:<ctimeNs>".
	Version string
}

func kindOf(mode uint32) Kind {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return KindFile
	case unix.S_IFDIR:
		return KindDir
	case unix.S_IFLNK:
		return KindSymlink
	default:
		return KindOther
	}
}

func infoOf(st *unix.Stat_t) Info {
	return Info{
		Kind: kindOf(st.Mode),
		Size: st.Size,
		Mode: os.FileMode(st.Mode & 0o7777),
		Version: fmt.Sprintf("%d:%d:%d:%d:%d", uint64(st.Dev), uint64(st.Ino), st.Size,
			st.Mtim.Sec*1e9+st.Mtim.Nsec, st.Ctim.Sec*1e9+st.Ctim.Nsec),
	}
}

// statPath stats path following symlinks; exists is false for ENOENT/ENOTDIR.
func statPath(path string) (info Info, exists bool, err error) {
	var st unix.Stat_t
	for {
		err = unix.Stat(path, &st)
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return Info{}, false, nil
	}
	if err != nil {
		return Info{}, false, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return infoOf(&st), true, nil
}

// lstatKind reports the kind of path without following a final symlink.
func lstatKind(path string) (k Kind, exists bool, err error) {
	var st unix.Stat_t
	err = unix.Lstat(path, &st)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return kindOf(st.Mode), true, nil
}

// statDevIno returns the device and inode of path (following symlinks).
func statDevIno(path string) (dev, ino uint64, ok bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ino, true
}

// dirLock is an exclusive flock(2) held on an open directory.
type dirLock struct{ fd int }

// tryLockDir opens dir and tries a non-blocking exclusive flock on it.
// busy is true when another open file description holds it.
func tryLockDir(dir string, held *dirLock) (busy bool, err error) {
	if held.fd <= 0 {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		held.fd = fd
	}
	for {
		err = unix.Flock(held.fd, unix.LOCK_EX|unix.LOCK_NB)
		switch err {
		case nil:
			return false, nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return true, nil
		default:
			return false, &os.PathError{Op: "flock", Path: dir, Err: err}
		}
	}
}

// unlock releases the flock and closes the directory.
func (d *dirLock) unlock() {
	if d.fd > 0 {
		_ = unix.Flock(d.fd, unix.LOCK_UN)
		_ = unix.Close(d.fd)
		d.fd = 0
	}
}

// linkNoReplace publishes oldpath at newpath with link(2), which never
// replaces an existing name; exists is true on EEXIST.
func linkNoReplace(oldpath, newpath string) (exists bool, err error) {
	err = unix.Link(oldpath, newpath)
	if err == unix.EEXIST {
		return true, nil
	}
	if err != nil {
		return false, &os.LinkError{Op: "link", Old: oldpath, New: newpath, Err: err}
	}
	return false, nil
}

// syncDir fsyncs a directory so a rename or link in it is durable (best effort).
func syncDir(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	_ = unix.Fsync(fd)
	_ = unix.Close(fd)
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("fsobserve: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

func isErrno(err error, en syscall.Errno) bool { return errors.Is(err, en) }
