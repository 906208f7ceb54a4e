package spill

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSessionDirSymlinkIsRefused: a session directory planted as a symlink
// (the replay spill root is a predictable name under /tmp, which sandboxed
// commands may write) must not redirect the spill: the store neither chmods
// the symlink's target nor creates the spill file in it.
func TestSessionDirSymlinkIsRefused(t *testing.T) {
	root := t.TempDir()
	victim := t.TempDir()
	if err := os.Chmod(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(root, SessionDir("sess"))); err != nil {
		t.Fatal(err)
	}
	st, err := NewStore(root)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := st.Save("sess", "bash.txt", "attacker-chosen output")
	if err == nil {
		t.Errorf("saved through a symlinked session directory at %s", saved.Locator)
	}
	fi, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("symlink target chmodded to %v, want it left at 0755", fi.Mode().Perm())
	}
	entries, err := os.ReadDir(victim)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("spill file written into the symlink target: %v", entries)
	}
}
