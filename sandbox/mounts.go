package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// MountedRoot says why a workspace-write root (canonical, absolute) cannot
// be granted for the mounts of this mount table, or ok=false when it can.
// Ours, not upstream's. A grant follows the directory tree, mounts
// included: bwrap binds the workspace recursively and a Landlock rule covers
// every file reached beneath the directory, so a mount inside the workspace
// grants what it shows, and a bind mount grants its source. The rule:
//
//   - a mount point strictly beneath root is refused, naming it (another
//     filesystem, or a bind mount of any directory of the host);
//   - a root that lies, through a bind mount, in a directory
//     [MeaninglessRoot] refuses (the workspace is a bind of /etc, or lies
//     in one) is refused, naming that directory. The source is found as
//     another mount of the same filesystem in the table names it; a source
//     this table does not show (a bind from outside this mount namespace,
//     as a container's volumes are) cannot be judged and is allowed.
//
// A root that is itself a mount point of another filesystem (a disk at
// /mnt/data) is allowed: the grant is what the user named. Pure: the caller
// passes the table and home.
func MountedRoot(root string, mounts []procfs.Mount, home string) (why string, bad bool) {
	root = filepath.Clean(root)
	for _, m := range mounts {
		if m.Point != root && beneath(m.Point, root) {
			return "it contains the mount point " + m.Point + " (" + m.FSType + " " + m.Source + "), and the grant would reach whatever that mount shows (a bind mount grants its source); unmount it or use a workspace without mounts beneath it", true
		}
	}
	src, ok := sourcePath(root, mounts)
	if !ok || src == root {
		return "", false
	}
	if why, bad := MeaninglessRoot(src, home); bad {
		return "it is, through a bind mount, " + src + ", and " + why, true
	}
	return "", false
}

// sourcePath returns the directory path shows, as the mount table names it
// where its filesystem is mounted whole: path lies beneath the mount that
// covers it (the longest mount point it lies beneath, the later of stacked
// ones), which shows the directory Root of its filesystem; another mount of
// the same filesystem whose Root holds that directory names it. ok=false
// when no mount of the table does.
func sourcePath(path string, mounts []procfs.Mount) (string, bool) {
	cover := -1
	for i, m := range mounts {
		if beneath(path, m.Point) && (cover < 0 || len(m.Point) >= len(mounts[cover].Point)) {
			cover = i
		}
	}
	if cover < 0 {
		return "", false
	}
	m := mounts[cover]
	dir := filepath.Join(m.Root, strings.TrimPrefix(path, m.Point))
	if m.Root == "/" {
		return path, true // the filesystem is mounted whole here
	}
	for _, o := range mounts {
		if o.Dev == m.Dev && o.Root == "/" {
			return filepath.Join(o.Point, dir), true
		}
	}
	return "", false
}
