package recording

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// CopyTree copies regular files and directories from src into dst (a
// recording's workspace/ seed into a fresh workspace, or a whole recording);
// anything else (a symlink, a device) is an error naming the path.
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
		}
		return errors.New(p + ": not a regular file or directory (workspace seeds hold plain files)")
	})
}
