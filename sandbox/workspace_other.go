//go:build !linux

package sandbox

import "github.com/dshsim/dshsim/sandbox/procfs"

// resolveRoot off Linux is the check then the resolution, by path: no
// Landlock runner pins the root there, so its id is zero.
func resolveRoot(p string, areas []string) (string, FileID, error) {
	if link, bad := RedirectingSymlink(p, areas); bad {
		return "", FileID{}, &errRedirect{link}
	}
	return canonicalPath(p), FileID{}, nil
}

// errRedirect is a symlink inside a temp area met while resolving a root.
type errRedirect struct{ link string }

func (e *errRedirect) Error() string { return "symlink " + e.link + " inside a temp area" }

// isRedirect reports whether err is a temp-area symlink met by resolveRoot.
func isRedirect(err error) (string, bool) {
	if r, ok := err.(*errRedirect); ok {
		return r.link, true
	}
	return "", false
}

// mountTable is empty off Linux: no mount table is read there.
func mountTable() ([]procfs.Mount, error) { return nil, nil }
