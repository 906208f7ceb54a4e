package sandbox

import (
	"os"
	"path/filepath"
)

// CanonicalPath resolves p the way the provider canonicalises a workspace
// root: realpath first (every symlink component), then absolutise; if
// realpath fails (a missing path) the spelling is kept, absolutised.
func CanonicalPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	return p
}

// WritableRoots is the allow-list a mode means: nothing unless the mode is
// workspace-write; then the workspace root, /tmp and the process temp dir,
// each canonicalised and de-duplicated (first occurrence wins). The Seatbelt
// profile and in-process fences use it; bwrap and Landlock carry their own
// temp semantics (see the package doc).
func WritableRoots(p Policy) []string {
	return writableRoots(p, os.TempDir(), CanonicalPath)
}

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
