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
		if fi, err := os.Lstat(a); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			for _, r := range areas {
				if strings.HasPrefix(a, strings.TrimSuffix(r, "/")+"/") {
					return a, true
				}
			}
		}
		parent := filepath.Dir(a)
		if parent == a {
			return "", false
		}
		a = parent
	}
}

// systemTrees are directories no workspace-write root may be: the roots of
// the system's trees (FHS), and the directories of programs and libraries
// beneath /usr and /var whose contents other users and the system run or
// trust. A grant of one of them lets a "confined" command rewrite what the
// system (or the next login) runs unconfined. Subdirectories that are
// someone's project (/usr/local/src/app, /srv/site, /opt/tool) stay allowed.
var systemTrees = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt",
	"/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var",
	"/usr/bin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/libx32", "/usr/local",
	"/usr/local/bin", "/usr/local/lib", "/usr/local/sbin", "/usr/sbin", "/usr/share",
	"/var/cache", "/var/lib", "/var/log", "/var/spool",
}

// MeaninglessRoot says why a workspace-write root (canonical, absolute)
// makes confinement meaningless, or ok=false when it does not. Ours, not
// upstream's (upstream grants any root). The rule, in order:
//
//   - "/" is the whole filesystem;
//   - a directory of [systemTrees] (the roots of system trees, and the
//     program and library directories beneath /usr and /var);
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
