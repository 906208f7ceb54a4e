package recording

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SeedBounds bound a workspace seed. A zero field takes its default; the
// defaults are far above any real recording's seed (upstream's are a few
// small files) and far below what would strain a host.
type SeedBounds struct {
	// MaxBytes bounds the bytes of all files together.
	MaxBytes int64 `json:",omitempty"`
	// MaxFiles bounds the number of files and directories.
	MaxFiles int `json:",omitempty"`
	// MaxFileBytes bounds one file's bytes.
	MaxFileBytes int64 `json:",omitempty"`
}

// Defaults of [SeedBounds].
const (
	DefaultSeedMaxBytes     = 128 << 20
	DefaultSeedMaxFiles     = 10000
	DefaultSeedMaxFileBytes = 32 << 20
)

// WithDefaults fills the zero fields of b with the defaults.
func (b SeedBounds) WithDefaults() SeedBounds {
	b.MaxBytes = cmp.Or(b.MaxBytes, DefaultSeedMaxBytes)
	b.MaxFiles = cmp.Or(b.MaxFiles, DefaultSeedMaxFiles)
	b.MaxFileBytes = cmp.Or(b.MaxFileBytes, DefaultSeedMaxFileBytes)
	return b
}

// Check refuses a negative bound (flag names as dsh-replay spells them).
func (b SeedBounds) Check() error {
	switch {
	case b.MaxBytes < 0:
		return fmt.Errorf("-seed-max-bytes %d: want a positive number of bytes (0: %d)", b.MaxBytes, int64(DefaultSeedMaxBytes))
	case b.MaxFiles < 0:
		return fmt.Errorf("-seed-max-files %d: want a positive number (0: %d)", b.MaxFiles, DefaultSeedMaxFiles)
	case b.MaxFileBytes < 0:
		return fmt.Errorf("-seed-max-file-bytes %d: want a positive number of bytes (0: %d)", b.MaxFileBytes, int64(DefaultSeedMaxFileBytes))
	}
	return nil
}

// BoundError is a seed past one of its bounds.
type BoundError struct {
	// Path is the file (or directory) that passed the bound.
	Path string
	// What says which bound and by how much.
	What string
}

func (e *BoundError) Error() string { return e.Path + ": " + e.What }

// CopySeed copies a workspace seed from src into dst (which exists) under
// bounds b (zero fields: the defaults), streaming each file: regular files,
// directories, and symlinks recreated as symlinks with the same target (a
// seed's AGENTS.md may be one, and what reads it follows it) provided the
// target is relative and stays inside src, so a recording can never make
// the replay read or write through one outside its workspace; anything else
// (a link out of the seed, a device) is an error naming the path, and the
// first entry past a bound is a [*BoundError] naming it, a file checked
// against its size before it is read and again while it is copied. What was
// copied before an error is left for the caller to remove.
func CopySeed(src, dst string, b SeedBounds) error {
	b = b.WithDefaults()
	c := copier{bounds: b}
	return c.tree(src, dst)
}

// CopyTree copies a tree as [CopySeed] does (a whole recording into a
// test's temporary directory), without bounds.
func CopyTree(src, dst string) error {
	c := copier{bounds: SeedBounds{MaxBytes: 1 << 62, MaxFiles: 1 << 62, MaxFileBytes: 1 << 62}}
	return c.tree(src, dst)
}

// copier copies one tree and counts what it copied.
type copier struct {
	bounds  SeedBounds
	bytes   int64
	entries int
}

func (c *copier) tree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if rel != "." {
			c.entries++
			if c.entries > c.bounds.MaxFiles {
				return &BoundError{Path: p, What: fmt.Sprintf("the seed holds more than %d files and directories, the bound of the count (dsh-replay -seed-max-files)", c.bounds.MaxFiles)}
			}
		}
		switch {
		case de.IsDir():
			return os.MkdirAll(target, 0o755)
		case de.Type().IsRegular():
			return c.file(p, target)
		case de.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := linkInside(rel, link); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			return os.Symlink(link, target)
		}
		return errors.New(p + ": not a regular file, directory or symlink (workspace seeds hold plain files, directories and links inside the seed)")
	})
}

// file streams one regular file, refusing it past the bounds of one file and
// of the total.
func (c *copier) file(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New(src + ": not a regular file or directory (workspace seeds hold plain files)")
	}
	if err := c.admit(src, fi.Size()); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	// One byte more than the bound shows a file that grew past it.
	limit := min(c.bounds.MaxFileBytes, c.bounds.MaxBytes-c.bytes) + 1
	n, err := io.Copy(out, io.LimitReader(in, limit))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if n != fi.Size() {
		if aerr := c.admit(src, n); aerr != nil {
			return aerr
		}
		return fmt.Errorf("%s: changed while it was copied (%d bytes, then %d)", src, fi.Size(), n)
	}
	c.bytes += n
	return nil
}

// admit checks a file of size bytes against the bounds.
func (c *copier) admit(path string, size int64) error {
	if size > c.bounds.MaxFileBytes {
		return &BoundError{Path: path, What: fmt.Sprintf("%d bytes, more than the bound of one file, %d bytes (dsh-replay -seed-max-file-bytes)", size, c.bounds.MaxFileBytes)}
	}
	if c.bytes+size > c.bounds.MaxBytes {
		return &BoundError{Path: path, What: fmt.Sprintf("the seed's files reach %d bytes here, more than the bound of the total, %d bytes (dsh-replay -seed-max-bytes)", c.bytes+size, c.bounds.MaxBytes)}
	}
	return nil
}

// linkInside checks that a symlink at rel (relative to the tree's root)
// whose target is link points inside the tree, lexically: a relative
// target that does not climb out of the root.
func linkInside(rel, link string) error {
	if filepath.IsAbs(link) {
		return fmt.Errorf("symlink to the absolute path %q (a seed's links must stay inside the seed)", link)
	}
	resolved := filepath.Join(filepath.Dir(rel), link)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return fmt.Errorf("symlink to %q leaves the seed", link)
	}
	return nil
}

// maxLinkStub bounds a link stub's size: the target path a checkout without
// symlinks writes, which Linux bounds at PATH_MAX.
const maxLinkStub = 4096

// SeedLink is one entry of the symlinks setting found in a seed: its path
// relative to the seed and, when the seed stores it as a link stub, the
// target to restore ("" when it is a symlink already).
type SeedLink struct {
	Path, Stub string
}

// SeedLinks checks the symlinks setting against the seed root: each path
// must be a symlink there (copied as one by [CopyTree]) or a link stub, the
// plain file a checkout without symlinks (git's core.symlinks=false, an
// archive that flattens links) writes instead: its whole content is the
// target path, with no newline, relative, staying inside the seed and
// naming an entry of the seed. Anything else (a missing path, a directory,
// a file whose content is not such a path) is an error naming the path, so
// the setting can never turn a real file into a link. Only the listed
// paths are looked at.
func SeedLinks(root string, paths []string) ([]SeedLink, error) {
	out := make([]SeedLink, len(paths))
	for i, rel := range paths {
		out[i].Path = rel
		p := filepath.Join(root, rel)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: not in the seed: %w", rel, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			continue
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("%s: neither a symlink nor a link stub (a plain file holding the link's target)", rel)
		case fi.Size() == 0 || fi.Size() > maxLinkStub:
			return nil, fmt.Errorf("%s: a plain file of %d bytes is not a link stub (its content would be the target path, 1 to %d bytes)", rel, fi.Size(), maxLinkStub)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		target := string(data)
		if strings.ContainsAny(target, "\x00\n") {
			return nil, fmt.Errorf("%s: a plain file holding %q is not a link stub (a target path, no newline)", rel, target)
		}
		if err := linkInside(rel, target); err != nil {
			return nil, fmt.Errorf("%s: link stub: %w", rel, err)
		}
		if _, err := os.Lstat(filepath.Join(root, filepath.Dir(rel), target)); err != nil {
			return nil, fmt.Errorf("%s: a plain file holding %q is not a link stub: no such entry in the seed", rel, target)
		}
		out[i].Stub = target
	}
	return out, nil
}

// RestoreLinks makes each link stub of links (see [SeedLinks]) in the
// copied workspace ws the symlink it stands for.
func RestoreLinks(ws string, links []SeedLink) error {
	for _, l := range links {
		if l.Stub == "" {
			continue
		}
		p := filepath.Join(ws, l.Path)
		if err := os.Remove(p); err != nil {
			return err
		}
		if err := os.Symlink(l.Stub, p); err != nil {
			return err
		}
	}
	return nil
}
