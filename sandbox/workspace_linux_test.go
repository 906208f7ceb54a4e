//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// varTmpBase is a directory under /var/tmp (outside the temp areas),
// canonical, removed at the test's end.
func varTmpBase(t *testing.T, prefix string) string {
	base, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	base, err = filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// TestResolveRoot: the one walk resolves as realpath does (absolute and
// relative links, "..", links in link targets), names a symlink inside a
// temp area instead of following it, and reports the directory it reached
// by device and inode.
func TestResolveRoot(t *testing.T) {
	base := varTmpBase(t, "dshsim-resolve-")
	area := filepath.Join(base, "area")
	real := filepath.Join(base, "real", "ws")
	for _, d := range []string{area, real} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, at string) {
		if err := os.Symlink(target, filepath.Join(base, at)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(base, "real"), "abs")     // absolute
	link("real/ws", "rel")                       // relative to base
	link("abs/ws/../ws", "chain")                // through another link, with ..
	link(filepath.Join(base, "real"), "area/in") // inside the area
	link("loop", "loop")                         // itself
	link(filepath.Join(base, "real", "file"), "notdir")
	os.WriteFile(filepath.Join(base, "real", "file"), nil, 0o644)
	var st syscall.Stat_t
	if err := syscall.Stat(real, &st); err != nil {
		t.Fatal(err)
	}
	want := FileID{Dev: uint64(st.Dev), Ino: st.Ino}
	areas := []string{area}
	for _, p := range []string{real, base + "/abs/ws", base + "/rel", base + "/chain", base + "/real/./ws/", base + "/area/../real/ws"} {
		got, f, id, err := resolveRoot(p, areas)
		if open := openID(t, f); err != nil || got != real || id != want || open != want {
			t.Errorf("resolveRoot(%s) = %q, %v, %v (open: %v); want %q, %v", p, got, id, err, open, real, want)
		}
	}
	if _, _, _, err := resolveRoot(base+"/area/in/ws", areas); err == nil {
		t.Error("a root through a link inside the area was resolved")
	} else if l, ok := isRedirect(err); !ok || l != area+"/in" {
		t.Errorf("resolveRoot through the area's link: %v, want the link named", err)
	}
	for _, p := range []string{base + "/loop", base + "/notdir", base + "/missing"} {
		if got, f, _, err := resolveRoot(p, areas); err == nil || f != nil {
			t.Errorf("resolveRoot(%s) = %q, want an error", p, got)
		}
	}
}

// TestResolvePlain: the one-open answer is given for a path without a
// symlink, spelled with "." and "..", and equals the walk's; for a path
// through any symlink (inside a temp area or not), a file or a missing
// component it gives none, and the walk decides. Fails if the open
// follows a symlink.
func TestResolvePlain(t *testing.T) {
	base := varTmpBase(t, "dshsim-plain-")
	real := filepath.Join(base, "real", "ws")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
	os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "link"))
	for _, p := range []string{real, base + "/real/./ws/", base + "/real/ws/../ws"} {
		got, f, id, ok := resolvePlain(p)
		walked, wf, wid, err := resolveRoot(p, nil)
		if !ok || err != nil || got != real || got != walked || id != wid || openID(t, f) != id || openID(t, wf) != id {
			t.Errorf("resolvePlain(%s) = %q, %v, %v; the walk: %q, %v, %v", p, got, id, ok, walked, wid, err)
		}
	}
	for _, p := range []string{base + "/link/ws", base + "/link/../real/ws", base + "/file", base + "/missing", "relative/ws"} {
		if got, f, _, ok := resolvePlain(p); ok || f != nil {
			t.Errorf("resolvePlain(%s) = %q, want no answer", p, got)
		}
	}
}

// openID is the device and inode of the directory f holds open, which it
// closes; zero for nil.
func openID(t *testing.T, f *os.File) FileID {
	t.Helper()
	if f == nil {
		return FileID{}
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino}
}
