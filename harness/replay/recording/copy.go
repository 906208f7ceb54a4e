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
