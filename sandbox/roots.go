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
