package recording

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CopyTree copies regular files, directories and symlinks from src into dst
// (a recording's workspace/ seed into a fresh workspace, or a whole
// recording). A symlink is recreated as a symlink with the same target (a
// seed's AGENTS.md may be one, and what reads it follows it), provided the
// target is relative and stays inside src: a link out of the seed is an
// error naming the path, so a recording can never make the replay read or
// write through it outside its workspace. Anything else (a device, a
// socket) is an error naming the path.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case de.IsDir():
			return os.MkdirAll(target, 0o755)
		case de.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
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
