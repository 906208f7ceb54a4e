package kernels

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Kernel is one real kernel booted under qemu (layer 2).
type Kernel struct {
	// Name is the column name ("5.10").
	Name string
	// Suite is the Debian suite that serves Package.
	Suite string
	// Package is the Debian binary package holding boot/vmlinuz-*.
	Package string
	// Landlock is the Landlock ABI the kernel offers ("none", "ABI 2", "ABI 6").
	Landlock string
	// CPUs is the number of virtual CPUs (qemu -smp).
	CPUs int
}

// Kernels are the layer-2 kernels, the qemu columns of the kernel matrix.
var Kernels = []Kernel{
	{Name: "5.10", Suite: "bullseye", Package: "linux-image-5.10.0-32-cloud-amd64-unsigned", Landlock: "none", CPUs: 2},
	{Name: "6.1", Suite: "bookworm", Package: "linux-image-6.1.0-47-cloud-amd64-unsigned", Landlock: "ABI 2", CPUs: 2},
	{Name: "6.12", Suite: "trixie", Package: "linux-image-6.12.117+deb13-cloud-amd64-unsigned", Landlock: "ABI 6", CPUs: 2},
	// One virtual CPU (the column 6.12/1): a Go runner that
	// restricts a thread other than the main one must not need a second CPU.
	{Name: "6.12/1", Suite: "trixie", Package: "linux-image-6.12.117+deb13-cloud-amd64-unsigned", Landlock: "ABI 6", CPUs: 1},
}

// Busybox is the package whose static busybox is the initramfs shell.
const Busybox = "busybox-static"

// BusyboxSuite pins the busybox-static version.
const BusyboxSuite = "bookworm"

// SystemCache is the machine-wide cache: root fills it, every user may read
// it (see [SharedCaches]).
const SystemCache = "/var/cache/dshsim-kernels"

// DefaultCache is $XDG_CACHE_HOME/dshsim-kernels, else [SystemCache] when
// writable, else ~/.cache/dshsim-kernels: always outside the repository, and
// per user unless the user may write the machine-wide one.
func DefaultCache() string {
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "dshsim-kernels")
	}
	if err := os.MkdirAll(SystemCache, 0o755); err == nil {
		if f, err := os.CreateTemp(SystemCache, ".w"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return SystemCache
		}
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "dshsim-kernels")
}

// SharedCaches are the caches a run with cache dir may read but not write:
// [SystemCache], unless it is dir itself. A user who may not write the
// machine-wide cache still uses what root downloaded there, instead of
// downloading every kernel again.
func SharedCaches(dir string) []string {
	if filepath.Clean(dir) == SystemCache {
		return nil
	}
	return []string{SystemCache}
}

// Cache is a private apt state and download directory: the machine's own apt
// lists, cache and sources are never touched. Concurrent users of one Dir
// (two go test runs) serialise on a lock file in it: the second waits for the
// first's download and then finds the package unpacked.
type Cache struct {
	// Dir is the cache this run may write.
	Dir string
	// ReadOnly are caches read before Dir and never written; a package
	// unpacked completely in one of them is used from there.
	ReadOnly []string
	// Logf receives progress (nil: none).
	Logf func(format string, args ...any)
}

func (c Cache) aptOpts() []string {
	return []string{
		"-o", "Dir::Etc::SourceList=" + filepath.Join(c.Dir, "apt", "sources.list"),
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(c.Dir, "apt", "sources.list.d"),
		"-o", "Dir::State::Lists=" + filepath.Join(c.Dir, "apt", "lists"),
		"-o", "Dir::Cache=" + filepath.Join(c.Dir, "apt", "cache"),
		"-o", "APT::Sandbox::User=root",
		"-o", "Acquire::Languages=none",
	}
}

// SourcesList names the suites the kernels come from (and busybox-static).
func SourcesList() string {
	var b strings.Builder
	for _, s := range []string{"bullseye", "bookworm", "trixie"} {
		fmt.Fprintf(&b, "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian %s main\n", s)
	}
	return b.String()
}

func (c Cache) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

func (c Cache) prepare() error {
	for _, d := range []string{"apt/sources.list.d", "apt/lists/partial", "apt/cache/archives/partial", "debs", "extract"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(c.Dir, "apt", "sources.list"), []byte(SourcesList()), 0o644)
}

func (c Cache) apt(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "apt-get", append(c.aptOpts(), args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Deb returns the cached .deb of pkg, downloading it (apt-get download with
// the private state; apt-get update first when the private lists are empty
// or do not know pkg) into a fresh directory and moving it into place when
// complete, so an interrupted download leaves no partial .deb to be found. Call
// it under the cache's lock ([Cache.Extract] does).
func (c Cache) Deb(ctx context.Context, pkg, suite string) (string, error) {
	if err := c.prepare(); err != nil {
		return "", err
	}
	debs := filepath.Join(c.Dir, "debs")
	find := func(dir string) string {
		m, _ := filepath.Glob(filepath.Join(dir, pkg+"_*.deb"))
		if len(m) > 0 {
			return m[len(m)-1]
		}
		return ""
	}
	if p := find(debs); p != "" {
		return p, nil
	}
	dl, err := os.MkdirTemp(debs, ".download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dl)
	spec := pkg + "/" + suite
	if err := c.apt(ctx, dl, "download", spec); err != nil {
		c.logf("kernels: %s not in the private lists; apt-get update", pkg)
		if err := c.apt(ctx, dl, "update"); err != nil {
			return "", err
		}
		if err := c.apt(ctx, dl, "download", spec); err != nil {
			return "", err
		}
	}
	p := find(dl)
	if p == "" {
		return "", fmt.Errorf("apt-get download %s left no %s_*.deb in %s", spec, pkg, dl)
	}
	dst := filepath.Join(debs, filepath.Base(p))
	return dst, os.Rename(p, dst)
}

// Extract returns the directory pkg is unpacked in (dpkg -x): a complete
// unpacking in one of c.ReadOnly, else one in c.Dir, made under c.Dir's lock
// (downloaded first when needed) and renamed into place only when complete.
func (c Cache) Extract(ctx context.Context, pkg, suite string) (string, error) {
	for _, ro := range c.ReadOnly {
		if d := filepath.Join(ro, "extract", pkg); complete(d) {
			return d, nil
		}
	}
	dst := filepath.Join(c.Dir, "extract", pkg)
	if complete(dst) {
		return dst, nil
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(dst) { // the run we waited for unpacked it
		return dst, nil
	}
	deb, err := c.Deb(ctx, pkg, suite)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".unpack-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if out, err := exec.CommandContext(ctx, "dpkg", "-x", deb, tmp).CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg -x %s: %v\n%s", deb, err, out)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".done"), nil, 0o644); err != nil {
		return "", err
	}
	os.RemoveAll(dst) // an unpacking from before complete() required .done
	return dst, os.Rename(tmp, dst)
}

// complete says whether dir is a finished unpacking (it holds .done).
func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".done"))
	return err == nil
}

// lock takes c.Dir's lock (flock on c.Dir/lock), waiting while another run
// holds it; ctx ends the wait.
func (c Cache) lock(ctx context.Context) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Join(c.Dir, "extract"), 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(c.Dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache lock: %w", err)
	}
	for waited := false; ; waited = true {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("cache lock %s: %w", path, err)
		}
		if !waited {
			c.logf("kernels: another run is filling the cache %s; waiting for it", c.Dir)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Vmlinuz returns the kernel image of k.
func (c Cache) Vmlinuz(ctx context.Context, k Kernel) (string, error) {
	dir, err := c.Extract(ctx, k.Package, k.Suite)
	if err != nil {
		return "", err
	}
	m, _ := filepath.Glob(filepath.Join(dir, "boot", "vmlinuz-*"))
	if len(m) != 1 {
		return "", fmt.Errorf("%s: want one boot/vmlinuz-* in %s, found %d", k.Package, dir, len(m))
	}
	return m[0], nil
}

// BusyboxPath returns the static busybox of busybox-static.
func (c Cache) BusyboxPath(ctx context.Context) (string, error) {
	dir, err := c.Extract(ctx, Busybox, BusyboxSuite)
	if err != nil {
		return "", err
	}
	for _, p := range []string{"bin/busybox", "usr/bin/busybox"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return filepath.Join(dir, p), nil
		}
	}
	return "", fmt.Errorf("%s: no busybox binary in %s", Busybox, dir)
}
