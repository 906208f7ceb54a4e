package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// canonicalPath resolves p the way the provider canonicalises a workspace
// root: realpath first (every symlink component), then absolutise; if
// realpath fails (a missing path) the spelling is kept, absolutised.
func canonicalPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	return p
}

// writableRoots is the allow-list a mode means: nothing unless the mode is
// workspace-write; then the workspace root, /tmp and the temp dir tmpdir,
// each canonicalised by canon and de-duplicated (first occurrence wins). The
// Seatbelt profile uses it; bwrap and Landlock carry their own temp
// semantics (see the package doc).
func writableRoots(p Policy, tmpdir string, canon func(string) string) []string {
	if p.Mode != WorkspaceWrite {
		return []string{}
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range []string{p.WorkspaceRoot, "/tmp", tmpdir} {
		c := canon(r)
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// tempAreas are the places any workspace-write command may write besides its
// workspace: /tmp and the process temp dir, each as spelled and resolved.
func tempAreas() []string {
	var areas []string
	for _, b := range []string{"/tmp", os.TempDir()} {
		if filepath.IsAbs(b) {
			areas = append(areas, filepath.Clean(b))
			if real, err := filepath.EvalSymlinks(b); err == nil {
				areas = append(areas, real)
			}
		}
	}
	return areas
}

// RedirectingSymlink returns the first of p and its ancestors (p first) that
// is a symlink lying strictly inside one of areas. A confined command may
// write in those areas, so it could have moved a directory there away and put
// a symlink to anywhere at its path: a root reached through such a link must
// not be granted (the next call would follow it out of the workspace).
func RedirectingSymlink(p string, areas []string) (link string, ok bool) {
	for a := filepath.Clean(p); ; {
		if fi, err := os.Lstat(a); err == nil && fi.Mode()&os.ModeSymlink != 0 && inArea(a, areas) {
			return a, true
		}
		parent := filepath.Dir(a)
		if parent == a {
			return "", false
		}
		a = parent
	}
}

// inArea reports whether path lies strictly inside one of areas.
func inArea(path string, areas []string) bool {
	for _, r := range areas {
		if strings.HasPrefix(path, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// systemTreesBelow are trees no workspace-write root may be or lie in: the
// system's configuration (/etc, with cron.d, profile.d and sudoers.d), its
// programs and libraries (/usr and the top-level program and library
// directories), the boot files, the spool that cron and mail run from, and
// the kernel's pseudo-filesystems (/proc, /sys, /dev). A grant anywhere in
// one lets a "confined" command rewrite what the system, another user or
// the next login runs unconfined.
var systemTreesBelow = []string{
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin", "/sys", "/usr",
	"/var/spool",
}

// systemTrees are directories no workspace-write root may be, though a
// project may lie beneath them (/srv/site, /opt/tool, /var/www/site,
// /home/u/proj): the roots of the other system trees (FHS) and the state
// directories beneath /var, which hold every service's data.
var systemTrees = []string{
	"/home", "/media", "/mnt", "/opt", "/root", "/run", "/srv", "/var", "/var/cache", "/var/lib", "/var/log",
}

// MeaninglessRoot says why a workspace-write root (canonical, absolute)
// makes confinement meaningless, or ok=false when it does not. Ours, not
// upstream's (upstream grants any root). The rule, in order:
//
//   - "/" is the whole filesystem;
//   - a directory in or beneath one of [systemTreesBelow] (/etc, /usr,
//     /boot, /var/spool, /proc, /sys, /dev, /bin, /sbin, /lib*), by path
//     component: /etc/cron.d is refused, /etc-backup is not;
//   - a directory of [systemTrees] itself (/home, /opt, /srv, /var, /var/lib,
//     ...), not what lies beneath it;
//   - the user's home directory home (canonical; "" or "/" for none) or any
//     directory above it: shell start-up files, ~/.ssh/authorized_keys, and
//     every tool's configuration live there, and the next login or tool run
//     executes them unconfined.
//
// Anything else, including a directory beneath home (a project), /tmp and
// /var/tmp, is allowed. Pure: the caller passes home.
func MeaninglessRoot(root, home string) (why string, ok bool) {
	root = filepath.Clean(root)
	if root == "/" {
		return "it is the whole filesystem", true
	}
	for _, s := range systemTreesBelow {
		if root == s {
			return "it is the system tree " + s + ", which the system or other users run or trust", true
		}
		if beneath(root, s) {
			return "it lies in the system tree " + s + ", which the system or other users run or trust", true
		}
	}
	for _, s := range systemTrees {
		if root == s {
			return "it is the system tree " + s + ", which the system or other users run or trust", true
		}
	}
	if home != "" && home != "/" && beneath(filepath.Clean(home), root) {
		if filepath.Clean(home) == root {
			return "it is the home directory, whose start-up files and configuration the next login or tool run executes unconfined", true
		}
		return "it holds the home directory " + filepath.Clean(home) + ", whose start-up files and configuration the next login or tool run executes unconfined", true
	}
	return "", false
}

// homeDir is the canonical home directory of this process ($HOME), or ""
// when it has none.
func homeDir() string {
	h := os.Getenv("HOME")
	if !filepath.IsAbs(h) {
		return ""
	}
	return canonicalPath(h)
}
