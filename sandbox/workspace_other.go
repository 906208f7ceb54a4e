//go:build !linux

package sandbox

import (
	"os"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// resolveRoot off Linux is the check then the resolution, by path: no
// Landlock runner or bwrap pins the root there, so it opens nothing and its
// id is zero.
func resolveRoot(p string, areas []string) (string, *os.File, FileID, error) {
	if link, bad := RedirectingSymlink(p, areas); bad {
		return "", nil, FileID{}, &errRedirect{link}
	}
	return canonicalPath(p), nil, FileID{}, nil
}

// resolvePlain off Linux gives no answer: resolveRoot decides.
func resolvePlain(string) (string, *os.File, FileID, bool) { return "", nil, FileID{}, false }

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

// openGitDir off Linux opens nothing: no bwrap runs there.
func openGitDir(Policy, *os.File) (*os.File, error) { return nil, nil }
