package kernels_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/kernels"
	"github.com/dshsim/dshsim/internal/waittest"
)

// fakeDeb builds a tiny real .deb of package pkg holding boot/vmlinuz-test
// with dpkg-deb, in the cache's debs/ directory (so no download happens).
func fakeDeb(t *testing.T, cacheDir, pkg string) {
	t.Helper()
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("needs dpkg-deb (Debian's dpkg) to build a package")
	}
	src := t.TempDir()
	for name, data := range map[string]string{
		"DEBIAN/control":    "Package: " + pkg + "\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: test\n",
		"boot/vmlinuz-test": "not a kernel\n",
	} {
		harness.MustWrite(t, filepath.Join(src, filepath.FromSlash(name)), data)
	}
	debs := filepath.Join(cacheDir, "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", src, filepath.Join(debs, pkg+"_1_all.deb")).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v\n%s", err, out)
	}
}

// TestCacheSerialisesConcurrentUsers: two users of one cache directory at
// once both get the unpacked package (one waits for the other's lock), and a
// user that finds the lock held waits instead of failing.
func TestCacheSerialisesConcurrentUsers(t *testing.T) {
	dir := t.TempDir()
	fakeDeb(t, dir, "pkg-a")
	c := kernels.Cache{Dir: dir}

	// Someone else holds the lock: Extract waits (until its context ends),
	// it does not fail with a lock error.
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Extract(ctx, "pkg-a", "any"); done <- err }()
	cancel()
	if err := waittest.Recv(t, done, "Extract to return after its context ended"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Extract with the lock held elsewhere: %v, want it to wait until its context ended", err)
	}
	f.Close() // releases the lock

	var wg sync.WaitGroup
	got := make([]string, 2)
	errs := make([]error, 2)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = c.Extract(context.Background(), "pkg-a", "any")
		}()
	}
	waittest.Group(t, &wg, "the concurrent Extracts to return")
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("concurrent Extract %d: %v", i, errs[i])
		}
		if b, err := os.ReadFile(filepath.Join(got[i], "boot", "vmlinuz-test")); err != nil || string(b) != "not a kernel\n" {
			t.Fatalf("concurrent Extract %d: %s: %q, %v", i, got[i], b, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "extract", ".unpack-*")); len(left) > 0 {
		t.Errorf("staging directories left behind: %v", left)
	}
}

// TestCacheReadsSharedCacheFirst: a complete unpacking in a read-only cache
// (root's machine-wide one) is used as is; an incomplete one is not.
func TestCacheReadsSharedCacheFirst(t *testing.T) {
	shared, own := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(shared, "extract", "pkg-done", "boot"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "extract", "pkg-done", ".done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(shared, "extract", "pkg-half"), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeDeb(t, own, "pkg-half")
	c := kernels.Cache{Dir: own, ReadOnly: []string{shared}}
	if d, err := c.Extract(context.Background(), "pkg-done", "any"); err != nil || d != filepath.Join(shared, "extract", "pkg-done") {
		t.Errorf("complete in the shared cache: %s, %v; want the shared unpacking", d, err)
	}
	if d, err := c.Extract(context.Background(), "pkg-half", "any"); err != nil || d != filepath.Join(own, "extract", "pkg-half") {
		t.Errorf("incomplete in the shared cache: %s, %v; want our own unpacking", d, err)
	}
	if _, err := os.Stat(filepath.Join(shared, "lock")); err == nil {
		t.Error("the read-only cache was written (a lock file)")
	}
}

func TestSharedCaches(t *testing.T) {
	if got := kernels.SharedCaches(kernels.SystemCache); len(got) != 0 {
		t.Errorf("the system cache reads itself as shared: %v", got)
	}
	if got := kernels.SharedCaches("/home/u/.cache/dshsim-kernels"); len(got) != 1 || got[0] != kernels.SystemCache {
		t.Errorf("a user's cache reads %v, want the system cache", got)
	}
}
