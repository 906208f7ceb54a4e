package fsobserve

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/sandbox"
)

// Fence decides whether a mutation of t is allowed under policy, before any
// lock is taken: danger-full-access is unfenced; read-only denies every
// mutation; workspace-write re-resolves the display path now and requires the
// canonical target to lie under the canonical workspace root, /tmp or the OS
// temp directory (lexical prefix, or an ancestor with the same device and
// inode as a root). A denial is FS_SANDBOX_DENIED whose message is the denial
// marker; the tool adds the escalation hint. Reads are never fenced.
func (l *Local) Fence(t Target, policy sandbox.Policy) error {
	switch policy.Mode {
	case sandbox.DangerFullAccess:
		return nil
	case sandbox.WorkspaceWrite:
		key, err := canonical(t.Display, t.Display)
		if err != nil {
			return err
		}
		roots := WritableRoots(policy.WorkspaceRoot)
		// The write goes to t.Key; the fresh resolution catches a path that
		// moved since. Both must be inside.
		if Contained(key, roots) && Contained(t.Key, roots) {
			return nil
		}
	}
	// read-only, an unknown mode (fail closed), or outside every root.
	return Errorf(CodeSandboxDenied, "%s", sandbox.DenialMarker(policy.Mode))
}

// WritableRoots returns the canonical roots workspace-write may modify: the
// workspace root (when absolute), /tmp and the OS temp directory. A root whose
// path passes through a symlink that lies inside one of these areas is left
// out (fail closed): a confined command may write there, so it could have
// moved the root away and put a symlink to anywhere at its path. A workspace
// root that makes confinement meaningless (sandbox.MeaninglessRoot: "/", a
// system tree, the home directory or above it) is left out too, as
// sandbox.Validate refuses it for a confined command.
func WritableRoots(workspaceRoot string) []string {
	bases := []string{workspaceRoot, "/tmp", os.TempDir()}
	var areas []string
	for _, b := range bases {
		if filepath.IsAbs(b) {
			areas = append(areas, filepath.Clean(b))
			if real, err := filepath.EvalSymlinks(b); err == nil {
				areas = append(areas, real)
			}
		}
	}
	var roots []string
	add := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		if _, bad := sandbox.RedirectingSymlink(p, areas); bad {
			return
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		p = filepath.Clean(p)
		for _, r := range roots {
			if r == p {
				return
			}
		}
		roots = append(roots, p)
	}
	home := os.Getenv("HOME")
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	for i, b := range bases {
		if i == 0 && filepath.IsAbs(b) {
			c := b
			if real, err := filepath.EvalSymlinks(b); err == nil {
				c = real
			}
			if _, bad := sandbox.MeaninglessRoot(c, home); bad {
				continue
			}
		}
		add(b)
	}
	return roots
}

// Contained reports whether the canonical path key lies under (or is) one of
// roots: by lexical prefix, or by an existing ancestor of key that is the same
// file (device and inode) as a root.
func Contained(key string, roots []string) bool {
	for _, r := range roots {
		if key == r || strings.HasPrefix(key, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	type id struct{ dev, ino uint64 }
	ids := map[id]bool{}
	for _, r := range roots {
		if d, i, ok := statDevIno(r); ok {
			ids[id{d, i}] = true
		}
	}
	for p := key; ; {
		if d, i, ok := statDevIno(p); ok && ids[id{d, i}] {
			return true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false
		}
		p = parent
	}
}
