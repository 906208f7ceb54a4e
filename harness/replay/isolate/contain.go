//go:build linux

package isolate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultTmpSize bounds the child's private /tmp (the tmpfs size= option)
// when [Options.TmpSize] is 0: far above what a replay writes (a seeded
// workspace, its spill files, its session log), far below a host's memory.
const DefaultTmpSize = 512 << 20

// devNodes are the device nodes of the child's own /dev, bound from the
// host's: bwrap's --dev binds the same six from the /dev it runs under.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// devLinks are the symlinks of the child's /dev (process substitution and
// scripts that write /dev/stderr use them).
var devLinks = [][2]string{
	{"fd", "/proc/self/fd"},
	{"stdin", "/proc/self/fd/0"},
	{"stdout", "/proc/self/fd/1"},
	{"stderr", "/proc/self/fd/2"},
}

// contain builds the child's mount and network namespaces, in order:
//
//  1. every mount private (nothing propagates back to the host);
//  2. every mount of the host read-only, nosuid and nodev (mount_setattr,
//     recursively), so nothing the child runs writes the host's files or
//     opens a host device node;
//  3. a tmpfs of tmpSize bytes on /tmp (mode 1777), with the shared paths
//     bound read-only into it at their own paths;
//  4. a /dev of its own: a read-only tmpfs holding the six harmless device
//     nodes bound from the host's (the only mounts without nodev) and the
//     fd links;
//  5. the PID namespace's own /proc (a pid read from the host's /proc would
//     name a host process: a bwrap with --unshare-pid started in the child
//     opened the namespaces of whatever host process had its child's pid);
//  6. when newNet, loopback up in the fresh network namespace, which has
//     no other interface.
//
// The run stage then enters a user and mount namespace of its own
// (runInit), which locks all of this: no process of the replay, whatever
// its capabilities there, can remount, unmount or widen it.
func contain(share []string, tmpSize int64, newNet bool) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("isolate: make the child's mounts private: %w", err)
	}
	// Open what must stay reachable before the host is made read-only and
	// /tmp and /dev are covered.
	held, err := hold(share)
	if err != nil {
		return err
	}
	defer closeAll(held)
	devPaths := make([]string, len(devNodes))
	for i, n := range devNodes {
		devPaths[i] = "/dev/" + n
	}
	devs, err := hold(devPaths)
	if err != nil {
		return err
	}
	defer closeAll(devs)
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}); err != nil {
		return fmt.Errorf("isolate: make the host's mounts read-only in the child (mount_setattr, Linux 5.12 or later): %w", err)
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size="+strconv.FormatInt(tmpSize, 10)); err != nil {
		return fmt.Errorf("isolate: mount a tmpfs on the child's /tmp: %w", err)
	}
	for i, p := range share {
		if err := bindReadOnly(held[i], p); err != nil {
			return fmt.Errorf("isolate: share %s: %w", p, err)
		}
	}
	if err := mountDev(devs); err != nil {
		return fmt.Errorf("isolate: the child's /dev: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("isolate: mount the child's PID namespace's /proc: %w", err)
	}
	if !newNet {
		return nil
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("isolate: bring up loopback in the child's network namespace: %w", err)
	}
	return nil
}

// hold opens each path with O_PATH (nothing is read or written through it).
func hold(paths []string) ([]*os.File, error) {
	out := make([]*os.File, 0, len(paths))
	for _, p := range paths {
		f, err := os.OpenFile(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("isolate: hold %s: %w", p, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// bindReadOnly mounts the file or directory held by f at path (inside the
// fresh /tmp, parents created) and makes that mount read-only.
func bindReadOnly(f *os.File, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	} else if err := os.WriteFile(path, nil, 0o644); err != nil {
		return err
	}
	if err := unix.Mount(fdPath(f), path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount: %w", err)
	}
	if err := unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("make the bind mount read-only: %w", err)
	}
	return nil
}

func fdPath(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// mountDev puts a tmpfs on /dev holding the held device nodes (bound, each
// the one mount where device nodes may be opened) and the fd links, then
// makes the tmpfs read-only.
func mountDev(devs []*os.File) error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=64k"); err != nil {
		return fmt.Errorf("mount a tmpfs: %w", err)
	}
	for i, n := range devNodes {
		p := "/dev/" + n
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount(fdPath(devs[i]), p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
		// The bind inherits the host mount's new nodev; a device node is what it is for.
		if err := unix.MountSetattr(-1, p, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_RDONLY, Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC}); err != nil {
			return fmt.Errorf("allow the device node %s: %w", p, err)
		}
	}
	for _, l := range devLinks {
		if err := os.Symlink(l[1], "/dev/"+l[0]); err != nil {
			return err
		}
	}
	if err := os.Mkdir("/dev/shm", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("", "/dev", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("make it read-only: %w", err)
	}
	return nil
}

// loopbackUp sets IFF_UP on lo, the only interface of a fresh network
// namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// netNS names the calling process's network namespace ("net:[<inode>]").
func netNS() (string, error) {
	return os.Readlink("/proc/self/ns/net")
}

// notContained begins every error of checkContained: a child that started
// and is not contained is a defect here, not a missing capability.
const notContained = "isolate: the child is not contained: "

// checkContained refuses to run the handler unless the child is contained:
// /tmp is a tmpfs on another device than the host's (hostTmp, the parent's
// /tmp device, decimal), / is read-only, and the network namespace is not
// the host's (hostNet, the parent's; "" when the child keeps the host's).
func checkContained(hostTmp, hostNet string) error {
	var sfs unix.Statfs_t
	if err := unix.Statfs("/tmp", &sfs); err != nil {
		return fmt.Errorf(notContained+"statfs /tmp: %w", err)
	}
	if sfs.Type != unix.TMPFS_MAGIC {
		return fmt.Errorf(notContained+"its /tmp is not a tmpfs (type %#x)", sfs.Type)
	}
	var st unix.Stat_t
	if err := unix.Stat("/tmp", &st); err != nil {
		return fmt.Errorf(notContained+"stat /tmp: %w", err)
	}
	if strconv.FormatUint(st.Dev, 10) == hostTmp {
		return errors.New(notContained + "its /tmp is the host's /tmp")
	}
	if err := unix.Statfs("/", &sfs); err != nil {
		return fmt.Errorf(notContained+"statfs /: %w", err)
	}
	if sfs.Flags&unix.ST_RDONLY == 0 {
		return errors.New(notContained + "the host's / is writable")
	}
	if hostNet == "" {
		return nil
	}
	ns, err := netNS()
	if err != nil {
		return fmt.Errorf(notContained+"its network namespace: %w", err)
	}
	if ns == hostNet || !strings.HasPrefix(ns, "net:") {
		return fmt.Errorf(notContained+"it shares the host's network namespace (%s)", ns)
	}
	return nil
}
