package sandboxtest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ScratchEnv names the environment variable that moves the scratch root
// ([ScratchRoot]) away from /var/tmp, for example to a fresh directory a test
// or CI checks is empty afterwards.
const ScratchEnv = "DSHSIM_SCRATCH"

// ScratchRoot is the directory scratch directories go under: $DSHSIM_SCRATCH
// when set, else /var/tmp. It must lie outside the sandbox's temp areas (/tmp
// and $TMPDIR, which workspace-write grants wholesale, so an "outside"
// directory there could not show the workspace boundary); a root inside one is
// an error naming both.
func ScratchRoot() (string, error) {
	root := os.Getenv(ScratchEnv)
	if root == "" {
		return "/var/tmp", nil
	}
	if !filepath.IsAbs(root) {
		return "", fmt.Errorf("%s=%s: want an absolute path", ScratchEnv, root)
	}
	root = filepath.Clean(root)
	for _, area := range []string{"/tmp", os.TempDir()} {
		for _, a := range []string{area, realPath(area)} {
			if r := realPath(root); r == a || strings.HasPrefix(r, a+"/") || root == a || strings.HasPrefix(root, a+"/") {
				return "", fmt.Errorf("%s=%s: inside the temp area %s, which workspace-write grants (want a directory outside /tmp and $TMPDIR)", ScratchEnv, root, area)
			}
		}
	}
	return root, nil
}

// UsableScratchRoot is [ScratchRoot] checked for use, for a command that
// refuses a bad scratch root before it starts anything: an existing
// directory the caller may write and search. Every error names the variable
// (or says it is unset, for /var/tmp).
func UsableScratchRoot() (string, error) {
	root, err := ScratchRoot()
	if err != nil {
		return "", err
	}
	which := ScratchEnv + "=" + root
	if os.Getenv(ScratchEnv) == "" {
		which = "the scratch root " + root + " (" + ScratchEnv + " unset)"
	}
	fi, err := os.Stat(root)
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: no such directory", which)
	case errors.As(err, &pe):
		return "", fmt.Errorf("%s: %v", which, pe.Err)
	case err != nil:
		return "", fmt.Errorf("%s: %v", which, err)
	case !fi.IsDir():
		return "", fmt.Errorf("%s: not a directory", which)
	}
	if err := unix.Access(root, unix.W_OK|unix.X_OK); err != nil {
		return "", fmt.Errorf("%s: not writable (%v)", which, err)
	}
	return root, nil
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// MkdirScratch makes a fresh directory under [ScratchRoot] whose name starts
// with prefix; the caller removes it.
func MkdirScratch(prefix string) (string, error) {
	root, err := ScratchRoot()
	if err != nil {
		return "", err
	}
	return os.MkdirTemp(root, prefix)
}

// TempDir returns a fresh directory under [ScratchRoot] (outside /tmp, see the
// package manual) whose name starts with prefix, removed when t ends.
func TempDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := MkdirScratch(prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Leftovers lists what the directories dirs hold, each entry as
// "<dir>/<name>" (a directory that cannot be read is listed by its error),
// for a test that checks a run left nothing behind.
func Leftovers(dirs ...string) []string {
	var left []string
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			left = append(left, err.Error())
		}
		for _, e := range ents {
			left = append(left, filepath.Join(dir, e.Name()))
		}
	}
	return left
}
