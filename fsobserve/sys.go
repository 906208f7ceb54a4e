package fsobserve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("fsobserve: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

func isErrno(err error, en syscall.Errno) bool { return errors.Is(err, en) }

// errSymlinkInPath reports that a directory of a canonical key turned into a
// symlink (or otherwise resolved elsewhere) after the key was resolved.
var errSymlinkInPath = errors.New("a directory of the path changed into a symlink")

// pinDir opens the canonical directory dir without following any symlink,
// creating missing components one at a time relative to their pinned parent.
// Every later step of a write works relative to the returned descriptor, so
// a directory swapped for a symlink after the key was resolved cannot
// redirect the write.
func pinDir(dir string) (int, error) {
	fd, err := openNoSymlinks(dir)
	if err == nil {
		return fd, nil
	}
	if err != unix.ENOENT {
		return -1, err
	}
	parent := filepath.Dir(dir)
	if parent == dir {
		return -1, err
	}
	pfd, err := pinDir(parent)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	name := filepath.Base(dir)
	if err := unix.Mkdirat(pfd, name, 0o777); err != nil && err != unix.EEXIST {
		return -1, err
	}
	fd, err = unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP || err == unix.ENOTDIR {
		return -1, errSymlinkInPath
	}
	return fd, err
}

// openNoSymlinks opens dir refusing any symlink on the way (openat2
// RESOLVE_NO_SYMLINKS); on kernels without openat2 it opens normally and
// checks through /proc/self/fd that the descriptor is dir itself.
func openNoSymlinks(dir string) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	switch err {
	case nil:
		return fd, nil
	case unix.ELOOP, unix.ENOTDIR:
		return -1, errSymlinkInPath
	case unix.ENOSYS, unix.EPERM: // no openat2 (old kernel or seccomp filter)
	default:
		return -1, err
	}
	fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if real, rerr := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); rerr != nil || real != dir {
		unix.Close(fd)
		return -1, errSymlinkInPath
	}
	return fd, nil
}

// staged is a temp file in a private staging directory inside a pinned directory.
type staged struct {
	dirfd, stagefd int
	stageName      string
	tmpName        string
}

// stage creates the private staging directory (0700) and the exclusive temp
// file (0600) in the pinned directory and writes, fsyncs and chmods it. On
// failure nothing of it is left.
func stage(dirfd int, stageName, tmpName string, data []byte, mode os.FileMode) (*staged, error) {
	if err := unix.Mkdirat(dirfd, stageName, 0o700); err != nil {
		return nil, err
	}
	s := &staged{dirfd: dirfd, stagefd: -1, stageName: stageName, tmpName: tmpName}
	if err := s.write(data, mode); err != nil {
		s.cleanup()
		return nil, err
	}
	return s, nil
}

// write opens the staging directory and writes data to the temp file, made
// exclusively in it: written, fsynced, chmodded to mode.
func (s *staged) write(data []byte, mode os.FileMode) error {
	var err error
	s.stagefd, err = unix.Openat(s.dirfd, s.stageName, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	tfd, err := unix.Openat(s.stagefd, s.tmpName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(tfd), s.tmpName)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil && mode != 0o600 {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// publishLink links the temp file to name (never replacing); exists is true
// on EEXIST.
func (s *staged) publishLink(name string) (exists bool, err error) {
	err = unix.Linkat(s.stagefd, s.tmpName, s.dirfd, name, 0)
	if err == unix.EEXIST {
		return true, nil
	}
	return false, err
}

// publishRename renames the temp file over name.
func (s *staged) publishRename(name string) error {
	return unix.Renameat(s.stagefd, s.tmpName, s.dirfd, name)
}

// kindAt reports the kind of name in the pinned directory without following it.
func kindAt(dirfd int, name string) (k Kind, exists bool, err error) {
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.ENOENT {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return kindOf(st.Mode), true, nil
}

// cleanup removes the temp file (if still there) and the staging directory,
// best effort: a write that failed has its error, and one that was published
// stays published.
func (s *staged) cleanup() {
	if s.stagefd >= 0 {
		unix.Unlinkat(s.stagefd, s.tmpName, 0)
		unix.Close(s.stagefd)
		s.stagefd = -1
	}
	unix.Unlinkat(s.dirfd, s.stageName, unix.AT_REMOVEDIR)
}

func closeFd(fd int) { _ = unix.Close(fd) }

// syncFd fsyncs an open directory (best effort).
func syncFd(fd int) { _ = unix.Fsync(fd) }

// openNoBlock opens path read-only without blocking (a FIFO swapped in after a
// stat must not hang the caller, who may hold the target's lock) and returns
// the descriptor with the Info of what was actually opened (fstat), so a
// version compared against it is the version of the bytes that are read.
func openNoBlock(path string) (*os.File, Info, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, Info{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, Info{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), infoOf(&st), nil
}
