package kernels

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Kernel is one real kernel booted under qemu (kernels.md, layer 2).
type Kernel struct {
	// Name is the column name ("5.10").
	Name string
	// Suite is the Debian suite that serves Package.
	Suite string
	// Package is the Debian binary package holding boot/vmlinuz-*.
	Package string
	// Landlock is what kernels.md says about it ("none", "ABI 2", "ABI 6").
	Landlock string
	// CPUs is the number of virtual CPUs (qemu -smp); kernels.md's command
	// line gives one.
	CPUs int
}

// Kernels are the layer-2 kernels of kernels.md.
var Kernels = []Kernel{
	{Name: "5.10", Suite: "bullseye", Package: "linux-image-5.10.0-32-cloud-amd64-unsigned", Landlock: "none", CPUs: 2},
	{Name: "6.1", Suite: "bookworm", Package: "linux-image-6.1.0-47-cloud-amd64-unsigned", Landlock: "ABI 2", CPUs: 2},
	{Name: "6.12", Suite: "trixie", Package: "linux-image-6.12.117+deb13-cloud-amd64-unsigned", Landlock: "ABI 6", CPUs: 2},
	// One virtual CPU, as kernels.md's command line: a Go runner that
	// restricts a thread other than the main one must not need a second CPU.
	{Name: "6.12/1", Suite: "trixie", Package: "linux-image-6.12.117+deb13-cloud-amd64-unsigned", Landlock: "ABI 6", CPUs: 1},
}

// Busybox is the package whose static busybox is the initramfs shell.
const Busybox = "busybox-static"

// BusyboxSuite pins the busybox-static version.
const BusyboxSuite = "bookworm"

// DefaultCache is $XDG_CACHE_HOME/dshsim-kernels, else
// /var/cache/dshsim-kernels when writable, else ~/.cache/dshsim-kernels:
// always outside the repository.
func DefaultCache() string {
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "dshsim-kernels")
	}
	if err := os.MkdirAll("/var/cache/dshsim-kernels", 0o755); err == nil {
		if f, err := os.CreateTemp("/var/cache/dshsim-kernels", ".w"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/var/cache/dshsim-kernels"
		}
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "dshsim-kernels")
}

// Cache is a private apt state and download directory: the machine's own apt
// lists, cache and sources are never touched.
type Cache struct {
	Dir  string
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
// or do not know pkg).
func (c Cache) Deb(ctx context.Context, pkg, suite string) (string, error) {
	if err := c.prepare(); err != nil {
		return "", err
	}
	debs := filepath.Join(c.Dir, "debs")
	find := func() string {
		m, _ := filepath.Glob(filepath.Join(debs, pkg+"_*.deb"))
		if len(m) > 0 {
			return m[len(m)-1]
		}
		return ""
	}
	if p := find(); p != "" {
		return p, nil
	}
	spec := pkg + "/" + suite
	if err := c.apt(ctx, debs, "download", spec); err != nil {
		c.logf("kernels: %s not in the private lists; apt-get update", pkg)
		if err := c.apt(ctx, debs, "update"); err != nil {
			return "", err
		}
		if err := c.apt(ctx, debs, "download", spec); err != nil {
			return "", err
		}
	}
	if p := find(); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("apt-get download %s left no %s_*.deb in %s", spec, pkg, debs)
}

// Extract unpacks pkg (dpkg -x) once and returns the directory.
func (c Cache) Extract(ctx context.Context, pkg, suite string) (string, error) {
	dst := filepath.Join(c.Dir, "extract", pkg)
	if _, err := os.Stat(filepath.Join(dst, ".done")); err == nil {
		return dst, nil
	}
	deb, err := c.Deb(ctx, pkg, suite)
	if err != nil {
		return "", err
	}
	os.RemoveAll(dst)
	if out, err := exec.CommandContext(ctx, "dpkg", "-x", deb, dst).CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg -x %s: %v\n%s", deb, err, out)
	}
	return dst, os.WriteFile(filepath.Join(dst, ".done"), nil, 0o644)
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
