package fsobserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// DefaultDiffBasisMaxBytes is the default bound of the write diff basis (10 MiB).
const DefaultDiffBasisMaxBytes = 10 << 20

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, upstream's ceiling.
const maxSafeInteger = 1<<53 - 1

// Local is the local filesystem provider: target resolution, version stats,
// text reads, and writes/edits that compare the version and write under one
// per-target lock, atomically. It records nothing; observation is the
// caller's business (see Observations). Safe for concurrent use.
type Local struct {
	cwd           string
	diffBasisMax  int64
	locks         targetLocks
	beforePublish func(tmp, key string) // test hook: runs after the temp file is complete
	beforeOpen    func(key string)      // test hook: runs between an edit's version check and its open
}

// Option configures a Local.
type Option func(*Local) error

// WithCwd sets the directory relative paths resolve against when the caller
// gives none (default: the process working directory). It must be absolute.
func WithCwd(dir string) Option {
	return func(l *Local) error {
		if !filepath.IsAbs(dir) {
			return fmt.Errorf("fs-local: cwd must be an absolute path (got %q)", dir)
		}
		l.cwd = filepath.Clean(dir)
		return nil
	}
}

// WithDiffBasisMaxBytes bounds the old and new text a write keeps for its diff
// (both must be strictly below n bytes). n must be a positive integer no
// larger than 2^53-1.
func WithDiffBasisMaxBytes(n int64) Option {
	return func(l *Local) error {
		if err := ValidateDiffBasisMaxBytes(float64(n)); err != nil {
			return err
		}
		l.diffBasisMax = n
		return nil
	}
}

// ValidateDiffBasisMaxBytes checks a configured diffBasisMaxBytes value as
// upstream does (positive safe integer), for config loaders that read numbers.
func ValidateDiffBasisMaxBytes(v float64) error {
	if v != math.Trunc(v) || v < 1 || v > maxSafeInteger || math.IsNaN(v) {
		return fmt.Errorf("fs-local: diffBasisMaxBytes must be a positive safe integer (got %s)", strconv.FormatFloat(v, 'f', -1, 64))
	}
	return nil
}

// NewLocal returns a provider.
func NewLocal(opts ...Option) (*Local, error) {
	l := &Local{diffBasisMax: DefaultDiffBasisMaxBytes}
	wd, err := os.Getwd()
	if err == nil {
		l.cwd = wd
	}
	for _, o := range opts {
		if err := o(l); err != nil {
			return nil, err
		}
	}
	if l.cwd == "" {
		return nil, fmt.Errorf("fs-local: no working directory: %v", err)
	}
	return l, nil
}

// Cwd returns the provider's default directory.
func (l *Local) Cwd() string { return l.cwd }

// DiffBasisMaxBytes returns the configured diff-basis bound.
func (l *Local) DiffBasisMaxBytes() int64 { return l.diffBasisMax }

// HeldLocks returns the number of live per-target lock entries (0 when idle).
func (l *Local) HeldLocks() int { return l.locks.held() }

// Target is a resolved path.
type Target struct {
	// Display is the lexical absolute path (symlinks not resolved): what the
	// model sees in results and errors.
	Display string
	// Key is the canonical identity: the realpath of the file, or of its
	// nearest existing ancestor plus the missing suffix. Aliases share it and
	// it is stable across the file's creation. Writes go to Key.
	Key string
}

// Resolve resolves path against cwd (the provider's cwd when empty).
func (l *Local) Resolve(path, cwd string) (Target, error) {
	if strings.TrimSpace(path) == "" {
		return Target{}, Errorf(CodeNotFound, "file_path must be a non-empty string")
	}
	if cwd == "" {
		cwd = l.cwd
	}
	display := path
	if !filepath.IsAbs(display) {
		display = filepath.Join(cwd, display)
	}
	display = filepath.Clean(display)
	key, err := canonical(display, display)
	if err != nil {
		return Target{}, err
	}
	return Target{Display: display, Key: key}, nil
}

// canonical is realpath(p), or realpath of the nearest existing ancestor plus
// the missing suffix.
func canonical(p, display string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	switch {
	case isErrno(err, syscall.ENOTDIR):
		return "", Errorf(CodeNotFound, "cannot resolve %q: a parent path segment is not a directory", display)
	case isErrno(err, syscall.ENOENT):
		parent := filepath.Dir(p)
		if parent == p {
			return p, nil
		}
		k, err := canonical(parent, display)
		if err != nil {
			return "", err
		}
		return filepath.Join(k, filepath.Base(p)), nil
	default:
		return "", ioError("resolve", display, err)
	}
}

// Stat stats the target (following symlinks); exists is false when absent.
func (l *Local) Stat(t Target) (info Info, exists bool, err error) {
	info, exists, err = statPath(t.Key)
	if err != nil {
		return Info{}, false, ioError("stat", t.Display, err)
	}
	return info, exists, nil
}

// Open opens the target for a text read after checking it is a regular file
// (on the opened descriptor; the open never blocks, so a FIFO is refused, not
// waited on).
func (l *Local) Open(t Target) (*os.File, error) {
	f, info, err := openNoBlock(t.Key)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || isErrno(err, syscall.ENOTDIR) {
			return nil, Errorf(CodeNotFound, "cannot read %q: not found", t.Display)
		}
		return nil, ioError("read", t.Display, err)
	}
	if info.Kind != KindFile {
		f.Close()
		return nil, Errorf(CodeNotRegularFile, "cannot read %q: not a regular file", t.Display)
	}
	return f, nil
}

// ReadBytes reads the whole target as raw bytes (no text checks; a direct
// provider read: records nothing), at most max bytes: a file whose size
// exceeds max, or that grows past it while read, fails FS_TOO_LARGE with
// upstream's texts ("<size> bytes exceeds the <max>-byte limit", "content
// exceeds the <max>-byte limit"). A cancelled ctx fails FS_ABORTED.
func (l *Local) ReadBytes(ctx context.Context, t Target, max int64) ([]byte, error) {
	f, err := l.Open(t)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, ioError("read", t.Display, err)
	}
	if st.Size() > max {
		return nil, Errorf(CodeTooLarge, "cannot read %q: %d bytes exceeds the %d-byte limit", t.Display, st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, ioError("read", t.Display, err)
	}
	if int64(len(data)) > max {
		return nil, Errorf(CodeTooLarge, "cannot read %q: content exceeds the %d-byte limit", t.Display, max)
	}
	if err := ctx.Err(); err != nil {
		return nil, ErrAborted(err)
	}
	return data, nil
}

// ReadText reads the whole target as UTF-8 text without a leading
// byte-order mark (a direct provider read: records nothing). Errors:
// FS_NOT_FOUND, FS_NOT_REGULAR_FILE, FS_NOT_TEXT.
func (l *Local) ReadText(ctx context.Context, t Target) (string, error) {
	f, err := l.Open(t)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return "", ioError("read", t.Display, err)
	}
	if err := ctx.Err(); err != nil {
		return "", ErrAborted(err)
	}
	if i := indexNUL(data, BinarySniffBytes); i >= 0 {
		return "", Errorf(CodeNotText, "cannot read %q: binary file", t.Display)
	}
	if !utf8.Valid(data) {
		return "", Errorf(CodeNotText, "cannot read %q: invalid UTF-8 text", t.Display)
	}
	return string(DropByteOrderMark(data)), nil
}

func indexNUL(b []byte, limit int) int {
	for i, c := range b {
		if i >= limit {
			break
		}
		if c == 0 {
			return i
		}
	}
	return -1
}

// WriteResult is the outcome of a write.
type WriteResult struct {
	// Operation is "create" or "update".
	Operation string
	// Version is the post-write version ("missing:<key>" if the file vanished).
	Version string
	// Before is the old text (LF-normalized) for the diff, nil when not diffable.
	Before *string
	// After is the new content, LF-normalized.
	After string
}

// EditResult is the outcome of an edit.
type EditResult struct {
	// Version is the post-edit version.
	Version string
	// Before and After are the LF-normalized texts.
	Before, After string
}

// lockedStat takes t's lock (a done ctx aborts first) and stats t under it;
// op names the operation in an I/O error. On success the caller releases the
// lock; on error nothing is held.
func (l *Local) lockedStat(ctx context.Context, t Target, op string) (info Info, exists bool, release func(), err error) {
	if err := ctx.Err(); err != nil {
		return Info{}, false, nil, ErrAborted(err)
	}
	if release, err = l.locks.acquire(ctx, t.Key); err != nil {
		return Info{}, false, nil, err
	}
	if info, exists, err = statPath(t.Key); err != nil {
		release()
		return Info{}, false, nil, ioError(op, t.Display, err)
	}
	return info, exists, release, nil
}

// WriteText writes content verbatim to t under the target's lock. The intent
// is checked against a stat taken under the same lock: ReplaceIfVersion
// refuses a missing or changed file (FS_STALE_VERSION), CreateIfAbsent refuses
// an existing one (FS_NOT_OBSERVED, also when a competitor creates it while we
// write: publication is link(2), which never replaces). A non-regular target
// is FS_NOT_REGULAR_FILE. On any refusal or failure the old file is untouched.
func (l *Local) WriteText(ctx context.Context, t Target, content string, intent WriteIntent) (WriteResult, error) {
	// --8<-- [start:write-guard]
	info, exists, release, err := l.lockedStat(ctx, t, "write")
	if err != nil {
		return WriteResult{}, err
	}
	defer release()
	if exists && info.Kind != KindFile {
		return WriteResult{}, Errorf(CodeNotRegularFile, "cannot write %q: not a regular file", t.Display)
	}
	if !exists {
		// A dangling symlink (or other non-followable entry) at the key.
		if k, ok, _ := lstatKind(t.Key); ok && k != KindFile {
			return WriteResult{}, Errorf(CodeNotRegularFile, "cannot write %q: not a regular file", t.Display)
		}
	}
	switch intent.Kind {
	case ReplaceIfVersion:
		if !exists {
			return WriteResult{}, Errorf(CodeStaleVersion, "cannot write %q: file no longer exists", t.Display)
		}
		if info.Version != intent.Version {
			return WriteResult{}, Errorf(CodeStaleVersion, "cannot write %q: file changed since it was read", t.Display)
		}
	case CreateIfAbsent:
		if exists {
			return WriteResult{}, Errorf(CodeNotObserved, "cannot overwrite existing %q without reading it first", t.Display)
		}
	}
	// --8<-- [end:write-guard]
	var before *string
	if exists {
		before = l.diffBasis(t.Key, len(content))
	}
	mode := os.FileMode(0o600)
	if exists {
		mode = info.Mode
	}
	if err := l.writeAtomic(ctx, t, []byte(content), mode, !exists && intent.Kind == CreateIfAbsent); err != nil {
		return WriteResult{}, err
	}
	op := "create"
	if exists {
		op = "update"
	}
	return WriteResult{Operation: op, Version: l.postVersion(t.Key), Before: before, After: NormalizeLF(content)}, nil
}

// EditText applies e to t under the target's lock. A missing target is
// FS_STALE_VERSION even without a guard; a guard whose version differs from a
// stat taken under the lock is FS_STALE_VERSION (checked before matching).
// The file's CRLF style and mode are kept; a leading byte-order mark is not
// (the text is decoded without it, as upstream decodes, and written back
// as edited).
func (l *Local) EditText(ctx context.Context, t Target, e Edit, guard *EditGuard) (EditResult, error) {
	info, exists, release, err := l.lockedStat(ctx, t, "edit")
	if err != nil {
		return EditResult{}, err
	}
	defer release()
	if !exists {
		return EditResult{}, Errorf(CodeStaleVersion, "cannot edit %q: file changed since it was read", t.Display)
	}
	if info.Kind != KindFile {
		return EditResult{}, Errorf(CodeNotRegularFile, "cannot edit %q: not a regular file", t.Display)
	}
	if guard != nil && guard.Version != info.Version {
		return EditResult{}, Errorf(CodeStaleVersion, "cannot edit %q: file changed since it was read", t.Display)
	}
	// Read what the version names: open without blocking and check the
	// opened file again (a writer that ignores our lock may have replaced it
	// since the stat, even with a FIFO).
	if l.beforeOpen != nil {
		l.beforeOpen(t.Key)
	}
	f, opened, err := openNoBlock(t.Key)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return EditResult{}, Errorf(CodeStaleVersion, "cannot edit %q: file changed since it was read", t.Display)
		}
		return EditResult{}, ioError("edit", t.Display, err)
	}
	defer f.Close()
	if opened.Kind != KindFile {
		return EditResult{}, Errorf(CodeNotRegularFile, "cannot edit %q: not a regular file", t.Display)
	}
	if opened.Version != info.Version {
		return EditResult{}, Errorf(CodeStaleVersion, "cannot edit %q: file changed since it was read", t.Display)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return EditResult{}, ioError("edit", t.Display, err)
	}
	if err := checkText(data, "edit", t.Display); err != nil {
		return EditResult{}, err
	}
	raw := string(DropByteOrderMark(data))
	crlf := DetectCRLF(raw)
	before := NormalizeLF(raw)
	after, err := ApplyLiteralEdit(before, e, t.Display)
	if err != nil {
		return EditResult{}, err
	}
	disk := after
	if crlf {
		disk = strings.ReplaceAll(after, "\n", "\r\n")
	}
	if err := l.writeAtomic(ctx, t, []byte(disk), info.Mode, false); err != nil {
		return EditResult{}, err
	}
	return EditResult{Version: l.postVersion(t.Key), Before: before, After: after}, nil
}

func (l *Local) postVersion(key string) string {
	if info, ok, err := statPath(key); err == nil && ok {
		return info.Version
	}
	return "missing:" + key
}

// diffBasis returns the old text for the diff, or nil when the new content or
// the old file is at or over the bound, the old file is not text, changed
// size while read, is not regular, or any error occurs.
func (l *Local) diffBasis(key string, newLen int) *string {
	if int64(newLen) >= l.diffBasisMax {
		return nil
	}
	f, err := os.Open(key)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() >= l.diffBasisMax {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, fi.Size()+1))
	if err != nil || int64(len(data)) != fi.Size() {
		return nil
	}
	if checkText(data, "read", key) != nil {
		return nil
	}
	s := NormalizeLF(string(DropByteOrderMark(data)))
	return &s
}

// writeAtomic writes data to t.Key: it pins the key's directory (no symlink
// followed, missing directories created one by one), makes a private staging
// directory ".<base>.<pid>.<rand>.tmpdir" (0700) in it, a temp file
// "<base>.tmp" created exclusively (0600), writes, fsyncs and chmods it to
// mode, then publishes it (link(2) when create, else rename(2)) and removes the
// staging directory. Every step is relative to the pinned directory, so a
// directory swapped for a symlink meanwhile cannot redirect the write.
// Nothing is published on failure.
func (l *Local) writeAtomic(ctx context.Context, t Target, data []byte, mode os.FileMode, create bool) error {
	dir, base := filepath.Dir(t.Key), filepath.Base(t.Key)
	dirfd, err := pinDir(dir)
	if err != nil {
		return ioError("write", t.Display, err)
	}
	defer closeFd(dirfd)
	stageName := fmt.Sprintf(".%s.%d.%s.tmpdir", base, os.Getpid(), randomHex(16))
	s, err := stage(dirfd, stageName, base+".tmp", data, mode)
	if err != nil {
		return ioError("write", t.Display, err)
	}
	defer s.cleanup()
	if l.beforePublish != nil {
		l.beforePublish(filepath.Join(dir, stageName, base+".tmp"), t.Key)
	}
	if err := ctx.Err(); err != nil {
		return ErrAborted(err)
	}
	if create {
		exists, err := s.publishLink(base)
		if err != nil {
			return ioError("write", t.Display, err)
		}
		if exists {
			k, ok, lerr := kindAt(dirfd, base)
			switch {
			case lerr != nil:
				return ioError("write", t.Display, lerr)
			case ok && k != KindFile:
				return Errorf(CodeNotRegularFile, "cannot write %q: not a regular file", t.Display)
			default: // a competing file (or one that vanished again): never replace
				return Errorf(CodeNotObserved, "cannot overwrite existing %q without reading it first", t.Display)
			}
		}
	} else if err := s.publishRename(base); err != nil {
		return ioError("write", t.Display, err)
	}
	syncFd(dirfd)
	return nil
}
