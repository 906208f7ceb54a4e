package sandboxtest

import (
	"os"
	"testing"
)

// TempDir returns a fresh directory under /var/tmp (outside /tmp, see the
// package manual) whose name starts with prefix, removed when t ends.
func TempDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
