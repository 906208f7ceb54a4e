package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// RunDirPrefix starts the name of every directory a sim run makes
// ([MkdirRun]): the temporary directories of [Env.TempDir] under $TMPDIR and
// the scratch directories of [Env.ScratchDir] under the scratch root.
// [RemoveDeadRuns] looks at these names only.
const RunDirPrefix = "dshsim-run-"

// lockSuffix ends the name of a run directory's lock file, which lies beside
// it: the directory itself may be a workspace, whose contents a sim shows
// and whose directories the file tools lock (fsobserve).
const lockSuffix = ".lock"

// MkdirRun makes a fresh directory under parent, named [RunDirPrefix], name,
// "-" and a random suffix (mode 0700), and holds it for this process until
// release: an exclusive flock on its lock file beside it (the same name and
// ".lock"), which the kernel drops when the process ends however it ends
// (SIGKILL included), so that [RemoveDeadRuns] tells a killed run's directory
// from a live one. release removes the directory and everything in it, then
// the lock file (kept when the directory could not be removed, for the next
// run to try again).
//
// The lock file is made, locked and checked to be still the one at its path
// before the directory is made: a [RemoveDeadRuns] that took it in the
// moment between its creation and its flock removed it, and MkdirRun makes
// another.
func MkdirRun(parent, name string) (dir string, release func(), err error) {
	for range 10 {
		f, err := os.CreateTemp(parent, RunDirPrefix+name+"-*"+lockSuffix)
		if err != nil {
			return "", nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return "", nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		held, err1 := f.Stat()
		at, err2 := os.Lstat(f.Name())
		if err1 != nil || err2 != nil || !os.SameFile(held, at) {
			f.Close() // removed while this process waited for the lock
			continue
		}
		dir = strings.TrimSuffix(f.Name(), lockSuffix)
		if err := os.Mkdir(dir, 0o700); err != nil {
			os.Remove(f.Name())
			f.Close()
			return "", nil, err
		}
		return dir, func() {
			if removeTree(dir) == nil {
				os.Remove(f.Name())
			}
			f.Close()
		}, nil
	}
	return "", nil, fmt.Errorf("make a run directory under %s: removed again and again before it was locked", parent)
}

// RemoveDeadRuns removes what killed runs left under each parent: every run
// directory ([MkdirRun]) of this user (its lock file is owned by the
// effective uid) that no live process holds (its lock is free), with its lock
// file. A live run's directory, this process's included, and another
// user's are never touched, nor anything without a lock file of its own. It
// returns the directories removed; one it could not remove completely is an
// error naming it (a parent that does not exist holds nothing to remove).
func RemoveDeadRuns(parents ...string) (removed []string, err error) {
	var errs []error
	for _, parent := range parents {
		ents, err := os.ReadDir(parent)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), RunDirPrefix) || !strings.HasSuffix(e.Name(), lockSuffix) || !e.Type().IsRegular() {
				continue
			}
			lock := filepath.Join(parent, e.Name())
			dead, err := removeIfDead(lock)
			if err != nil {
				errs = append(errs, err)
			}
			if dead {
				removed = append(removed, strings.TrimSuffix(lock, lockSuffix))
			}
		}
	}
	return removed, errors.Join(errs...)
}

// removeIfDead removes the run directory of the lock file lock, and then
// lock, when lock is this user's and free, holding the lock while it
// removes (a [MkdirRun] that waits for it then finds its lock file gone and
// makes another).
func removeIfDead(lock string) (dead bool, err error) {
	f, err := os.OpenFile(lock, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, nil // gone, replaced by a symlink, or not ours to read
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || int(st.Uid) != os.Geteuid() || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, nil
	}
	at, err := os.Lstat(lock)
	held, err2 := f.Stat()
	if err != nil || err2 != nil || !os.SameFile(held, at) {
		return false, nil // renamed or replaced since it was read
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false, nil // a live run holds it (EWOULDBLOCK)
	}
	dir := strings.TrimSuffix(lock, lockSuffix)
	if fi, err := os.Lstat(dir); err == nil && (!fi.IsDir() || fi.Sys().(*syscall.Stat_t).Uid != st.Uid) {
		return false, nil // not a run directory of this user's (MkdirRun makes a directory)
	}
	if err := removeTree(dir); err != nil {
		return true, fmt.Errorf("remove %s, left by a killed run: %w", dir, err)
	}
	os.Remove(lock)
	return true, nil
}

// removeTree removes dir and everything in it; directories a run made
// read-only are made writable by their owner first, when a plain removal
// fails.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
