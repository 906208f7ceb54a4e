package spill

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// RetrievalHint is the VERBATIM hint returned with every saved spill.
const RetrievalHint = "Use read with offset/limit, or grep this path to search within it."

// Saved describes one stored spill file.
type Saved struct {
	// Locator is the absolute path of the file.
	Locator string
	// Bytes is the number of bytes written.
	Bytes int64
	// RetrievalHint tells the model how to read it.
	RetrievalHint string
}

// Store saves spilled results under a root directory, one private directory
// per session. It is safe for concurrent use.
type Store struct {
	root string
	// Rand supplies the random file-name prefix; nil means crypto/rand.
	Rand io.Reader

	mu       sync.Mutex
	lazyRoot string
}

// NewStore returns a store rooted at root (made absolute). An empty root means
// a private mkdtemp(<tmpdir>/dsh-spill-) created on first save.
func NewStore(root string) (*Store, error) {
	if root == "" {
		return &Store{}, nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("spill-local: root %q: %w", root, err)
	}
	return &Store{root: abs}, nil
}

// Root returns the configured root, or the private root once created ("" before).
func (s *Store) Root() string {
	if s.root != "" {
		return s.root
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lazyRoot
}

func (s *Store) rootDir() (string, error) {
	if s.root != "" {
		return s.root, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lazyRoot == "" {
		d, err := os.MkdirTemp("", "dsh-spill-")
		if err != nil {
			return "", fmt.Errorf("spill-local: create private root: %w", err)
		}
		s.lazyRoot = d
	}
	return s.lazyRoot, nil
}

// SessionDir returns "session-<first 12 hex of sha256(sessionID)>".
func SessionDir(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return "session-" + hex.EncodeToString(sum[:])[:12]
}

// EncodeSegment makes name one safe path segment: [A-Za-z0-9._-] are kept,
// every other UTF-16 unit becomes "~" + 4 uppercase hex digits; "" becomes
// "~", and the dot segments "." and ".." are encoded whole.
func EncodeSegment(name string) string {
	switch name {
	case "":
		return "~"
	case ".":
		return "~002E"
	case "..":
		return "~002E~002E"
	}
	var b strings.Builder
	for _, r := range name {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			b.WriteRune(r)
			continue
		}
		if r >= 0x10000 {
			r -= 0x10000
			fmt.Fprintf(&b, "~%04X~%04X", 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			continue
		}
		fmt.Fprintf(&b, "~%04X", r)
	}
	return b.String()
}

// File is a spill file being written.
type File struct {
	f       *os.File
	bw      *bufio.Writer
	locator string
	n       int64
}

// Write appends to the file.
func (f *File) Write(p []byte) (int, error) {
	if f.bw == nil {
		f.bw = bufio.NewWriterSize(f.f, 32<<10) // writes of 32 KiB and more bypass the buffer
	}
	n, err := f.bw.Write(p)
	f.n += int64(n)
	return n, err
}

// Locator returns the file's path.
func (f *File) Locator() string { return f.locator }

// Tail returns the last n bytes written (fewer when the file is shorter).
func (f *File) Tail(n int) ([]byte, error) {
	if f.bw != nil {
		if err := f.bw.Flush(); err != nil {
			return nil, fmt.Errorf("spill-local: write %s: %w", f.locator, err)
		}
	}
	off := max(f.n-int64(n), 0)
	b := make([]byte, f.n-off)
	if _, err := f.f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("spill-local: read back %s: %w", f.locator, err)
	}
	return b, nil
}

// Close finishes the file and returns what was saved.
func (f *File) Close() (Saved, error) {
	if f.bw != nil {
		if err := f.bw.Flush(); err != nil {
			f.f.Close()
			return Saved{}, fmt.Errorf("spill-local: write %s: %w", f.locator, err)
		}
	}
	if err := f.f.Close(); err != nil {
		return Saved{}, fmt.Errorf("spill-local: close %s: %w", f.locator, err)
	}
	return Saved{Locator: f.locator, Bytes: f.n, RetrievalHint: RetrievalHint}, nil
}

// Discard closes and removes the file.
func (f *File) Discard() {
	f.f.Close()
	os.Remove(f.locator)
}

// Create opens a new spill file for sessionID named after name. The session
// directory is 0700, the file 0600 and created exclusively.
func (s *Store) Create(sessionID, name string) (*File, error) {
	if sessionID == "" {
		return nil, errors.New("spill-local: no session owner")
	}
	root, err := s.rootDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, SessionDir(sessionID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spill-local: %w", err)
	}
	// The session directory is opened without following a symlink, and the
	// chmod and the exclusive create work on that descriptor, so a symlink
	// planted at its name cannot redirect either.
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return nil, fmt.Errorf("spill-local: session directory %s is not a directory (a symlink?)", dir)
		}
		return nil, fmt.Errorf("spill-local: open %s: %w", dir, err)
	}
	defer unix.Close(dirfd)
	if err := unix.Fchmod(dirfd, 0o700); err != nil {
		return nil, fmt.Errorf("spill-local: chmod %s: %w", dir, err)
	}
	var rb [6]byte
	src := s.Rand
	if src == nil {
		src = rand.Reader
	}
	if _, err := io.ReadFull(src, rb[:]); err != nil {
		return nil, fmt.Errorf("spill-local: random name: %w", err)
	}
	base := hex.EncodeToString(rb[:]) + "-" + EncodeSegment(name)
	p := filepath.Join(dir, base)
	fd, err := unix.Openat(dirfd, base, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600) // read back by Tail
	if err != nil {
		return nil, fmt.Errorf("spill-local: %w", &os.PathError{Op: "open", Path: p, Err: err})
	}
	return &File{f: os.NewFile(uintptr(fd), p), locator: p}, nil
}

// Save writes text to a new spill file.
func (s *Store) Save(sessionID, name, text string) (Saved, error) {
	f, err := s.Create(sessionID, name)
	if err != nil {
		return Saved{}, err
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Discard()
		return Saved{}, fmt.Errorf("spill-local: write %s: %w", f.locator, err)
	}
	return f.Close()
}

// SaveStream copies r to a new spill file in bounded memory.
func (s *Store) SaveStream(sessionID, name string, r io.Reader) (Saved, error) {
	f, err := s.Create(sessionID, name)
	if err != nil {
		return Saved{}, err
	}
	if _, err := io.Copy(f.f, r); err != nil {
		f.Discard()
		return Saved{}, fmt.Errorf("spill-local: write %s: %w", f.locator, err)
	}
	st, err := f.f.Stat()
	if err == nil {
		f.n = st.Size()
	}
	return f.Close()
}
