package fsobserve

import (
	"context"
	"path/filepath"
	"sync"
	"time"
)

// targetLocks serializes mutations per target key inside the process (a
// channel semaphore per key, removed when nobody holds or waits for it) and
// across processes (an exclusive flock(2) on the nearest existing directory
// of the target).
//
// Why the directory and not the file: an atomic write replaces the file's
// inode, so a lock on the old inode would not exclude a writer that opened the
// new one, and a sidecar lock file would leave residue next to user files. A
// directory lock is coarser across processes (it serializes writers of
// different files in one directory) but needs no extra files. When the parent
// directory does not exist yet the nearest existing ancestor is locked: the
// file cannot exist then, so only a guarded create (published with link(2),
// which never replaces) or an unguarded write can run.
type targetLocks struct {
	mu sync.Mutex
	m  map[string]*lockEntry
}

type lockEntry struct {
	sem  chan struct{}
	refs int
}

// acquire takes the lock of key; release must be called exactly once.
func (l *targetLocks) acquire(ctx context.Context, key string) (release func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*lockEntry{}
	}
	e := l.m[key]
	if e == nil {
		e = &lockEntry{sem: make(chan struct{}, 1)}
		l.m[key] = e
	}
	e.refs++
	l.mu.Unlock()

	drop := func() {
		l.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, ErrAborted(ctx.Err())
	}
	var dl dirLock
	if err := lockDir(ctx, nearestDir(filepath.Dir(key)), &dl); err != nil {
		dl.unlock()
		<-e.sem
		drop()
		return nil, err
	}
	return func() {
		dl.unlock()
		<-e.sem
		drop()
	}, nil
}

// held reports how many keys have a live lock entry (tests assert 0 after use).
func (l *targetLocks) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}

// lockDir polls a non-blocking flock so a cancelled caller stops waiting.
func lockDir(ctx context.Context, dir string, dl *dirLock) error {
	wait := 200 * time.Microsecond
	for {
		busy, err := tryLockDir(dir, dl)
		if err != nil {
			return ioError("lock", dir, err)
		}
		if !busy {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ErrAborted(ctx.Err())
		case <-t.C:
		}
		if wait < 10*time.Millisecond {
			wait *= 2
		}
	}
}

// nearestDir returns dir or its nearest existing ancestor directory.
func nearestDir(dir string) string {
	for {
		if info, ok, _ := statPath(dir); ok && info.Kind == KindDir {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}
