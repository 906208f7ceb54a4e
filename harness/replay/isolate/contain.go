//go:build linux

package isolate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// building is where the setup stage builds the child's root: a tmpfs
// mounted over the host's /tmp in the child's own mount namespace, which
// becomes / (pivot_root) once built.
const building = "/tmp"

// rootSize bounds the tmpfs of the root itself: it holds only directories,
// mount points, symlinks and the made passwd and group.
const rootSize = 1 << 20

// entry is one host entry the root holds: a symlink recreated as such
// (link is its target), or a file or directory bound read-only (held open).
type entry struct {
	path string
	link string
	held *os.File
	dir  bool
}

// sources are what the setup stage holds of the host before it covers it:
// the system directories, the kept /etc entries, the made /etc files, the
// shared paths and the device nodes.
type sources struct {
	system, etc, share, dev []entry
	made                    map[string]string
}

func (s *sources) close() {
	for _, list := range [][]entry{s.system, s.etc, s.share, s.dev} {
		for _, e := range list {
			if e.held != nil {
				e.held.Close()
			}
		}
	}
}

// holdEntry holds the host's path p: a symlink by its target, a regular
// file or directory open with O_PATH; anything else (a socket, a FIFO, a
// device node) is never held (ok false), nor is a path the host lacks.
func holdEntry(p string, devices bool) (e entry, ok bool, err error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return entry{}, false, nil
	} else if err != nil {
		return entry{}, false, err
	}
	e.path = p
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		e.link, err = os.Readlink(p)
		return e, err == nil, err
	case m.IsDir(), m.IsRegular(), devices && m&fs.ModeCharDevice != 0:
		e.dir = m.IsDir()
	default:
		return entry{}, false, nil
	}
	f, err := os.OpenFile(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return entry{}, false, err
	}
	e.held = f
	return e, true, nil
}

// holdAll holds what the root will hold, before anything is covered.
func holdAll(cfg config) (*sources, error) {
	s := &sources{made: map[string]string{}}
	add := func(list *[]entry, p string, devices bool) error {
		e, ok, err := holdEntry(p, devices)
		if err != nil {
			return fmt.Errorf("isolate: hold %s: %w", p, err)
		}
		if ok {
			*list = append(*list, e)
		}
		return nil
	}
	system, etc := rootPaths()
	for _, p := range system {
		if err := add(&s.system, p, false); err != nil {
			s.close()
			return nil, err
		}
	}
	for _, p := range etc {
		if err := add(&s.etc, p, false); err != nil {
			s.close()
			return nil, err
		}
	}
	users, groups := cfg.etcIDs()
	for _, n := range etcMade {
		data, _ := os.ReadFile("/etc/" + n)
		ids := users
		if n == "group" {
			ids = groups
		}
		s.made[n] = idLines(string(data), ids, n == "group")
	}
	for _, p := range cfg.Share {
		e, ok, err := holdEntry(p, false)
		if err == nil && (!ok || e.link != "") {
			err = errors.New("not a file or directory")
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("isolate: share %s: %w", p, err)
		}
		s.share = append(s.share, e)
	}
	for _, n := range devNodes {
		if err := add(&s.dev, "/dev/"+n, true); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// etcIDs are the uids and gids the made passwd and group name: root's,
// nobody's and the run's own.
func (c config) etcIDs() (users, groups []int) {
	uid, gid := c.runIDs()
	return slices.Compact([]int{0, min(uid, nobody), max(uid, nobody)}), slices.Compact([]int{0, min(gid, nobody), max(gid, nobody)})
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}

// contain builds the child's root and network namespace, in order:
//
//  1. every mount private (nothing propagates back to the host);
//  2. what the root will hold of the host held open (holdAll): the system
//     directories, the kept /etc entries, the shared paths, the device
//     nodes; passwd and group read;
//  3. a small tmpfs on the host's /tmp (in this mount namespace only) that
//     becomes the root: the system directories bound read-only (nosuid,
//     nodev, recursively) or recreated as the symlinks they are; an /etc
//     of the kept entries bound the same way, and passwd and group made;
//     a tmpfs of tmpSize bytes (mode 1777) on /tmp; a /dev of its own (a
//     read-only tmpfs holding the six harmless device nodes bound from the
//     host's, the only mounts without nodev, and the fd links); the PID
//     namespace's own /proc (a pid read from the host's /proc would name a
//     host process); each shared path bound read-only at its own path;
//  4. the root's own tmpfs made read-only, then pivot_root into it and the
//     host's tree detached: nothing else of the host is reachable;
//  5. unless cfg.HostNet is "", loopback up in the fresh network
//     namespace, which has no other interface.
//
// The run stage then enters a user and mount namespace of its own
// (runInit), which locks all of this: no process of the run, whatever it
// does, can remount, unmount or widen it.
func contain(cfg config) (Containment, error) {
	var seen Containment
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return seen, fmt.Errorf("isolate: make the child's mounts private: %w", err)
	}
	src, err := holdAll(cfg)
	if err != nil {
		return seen, err
	}
	defer src.close()
	if err := unix.Mount("tmpfs", building, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=755,size="+strconv.Itoa(rootSize)); err != nil {
		return seen, fmt.Errorf("isolate: mount a tmpfs for the child's root: %w", err)
	}
	if seen.Root, err = buildRoot(cfg, src); err != nil {
		return seen, err
	}
	if err := unix.Mount("", building, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return seen, fmt.Errorf("isolate: make the child's root read-only: %w", err)
	}
	if err := pivot(building); err != nil {
		return seen, err
	}
	seen.Network = "the host's network namespace"
	if cfg.HostNet != "" {
		seen.Network = "none: a network namespace of its own whose only interface is loopback"
		if err := loopbackUp(); err != nil {
			return seen, fmt.Errorf("isolate: bring up loopback in the child's network namespace: %w", err)
		}
	}
	return seen, nil
}

// buildRoot fills the root's tmpfs (see contain) and describes each top
// entry of it, as [Containment.Root] lists them.
func buildRoot(cfg config, src *sources) ([]string, error) {
	var root []string
	for _, e := range src.system {
		if err := place(building, e); err != nil {
			return nil, fmt.Errorf("isolate: the child's %s: %w", e.path, err)
		}
		root = append(root, describe(e, "read-only"))
	}
	for _, d := range emptyDirs {
		if err := os.Mkdir(building+"/"+d, 0o755); err != nil {
			return nil, err
		}
		root = append(root, "/"+d+" (empty, made for it)")
	}
	if err := os.Mkdir(building+"/etc", 0o755); err != nil {
		return nil, err
	}
	var etc []string
	for _, e := range src.etc {
		if err := place(building, e); err != nil {
			return nil, fmt.Errorf("isolate: the child's %s: %w", e.path, err)
		}
		etc = append(etc, filepath.Base(e.path))
	}
	for _, n := range etcMade {
		if err := os.WriteFile(building+"/etc/"+n, []byte(src.made[n]), 0o644); err != nil {
			return nil, err
		}
	}
	users, groups := cfg.etcIDs()
	root = append(root, fmt.Sprintf("/etc (read-only: %s; passwd and group made, naming uids %s and gids %s only)",
		strings.Join(etc, ", "), joinInts(users), joinInts(groups)))
	if err := os.Mkdir(building+"/tmp", 0o755); err != nil {
		return nil, err
	}
	if err := unix.Mount("tmpfs", building+"/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size="+strconv.FormatInt(cfg.TmpSize, 10)); err != nil {
		return nil, fmt.Errorf("isolate: mount a tmpfs on the child's /tmp: %w", err)
	}
	root = append(root, "/tmp (a tmpfs of its own, "+Size(cfg.TmpSize)+")")
	if err := mountDev(building+"/dev", src.dev); err != nil {
		return nil, fmt.Errorf("isolate: the child's /dev: %w", err)
	}
	root = append(root, "/dev (read-only: "+strings.Join(devNodes, ", ")+"; pts: pseudo-terminals of its own)")
	if err := os.Mkdir(building+"/proc", 0o555); err != nil {
		return nil, err
	}
	if err := unix.Mount("proc", building+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return nil, fmt.Errorf("isolate: mount the child's PID namespace's /proc: %w", err)
	}
	root = append(root, "/proc (its PID namespace's own)")
	for _, e := range src.share {
		if err := place(building, e); err != nil {
			return nil, fmt.Errorf("isolate: share %s: %w", e.path, err)
		}
		root = append(root, describe(e, "shared, read-only"))
	}
	return root, nil
}

func describe(e entry, how string) string {
	if e.link != "" {
		return e.path + " -> " + e.link
	}
	return e.path + " (" + how + ")"
}

// place puts e into the root being built under base at e's own path: the
// symlink it is, or a read-only bind (recursive, nosuid, nodev) of what it
// holds onto a mount point made for it (parents made as needed).
func place(base string, e entry) error {
	at := base + e.path
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return err
	}
	if e.link != "" {
		return os.Symlink(e.link, at)
	}
	if e.dir {
		if err := os.Mkdir(at, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	} else if err := writeMountPoint(at); err != nil {
		return err
	}
	return bindReadOnly(e.held, at)
}

// writeMountPoint makes an empty file at p unless something is there (a
// share inside another share is mounted over what that one holds).
func writeMountPoint(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	} else if err != nil {
		return err
	}
	return f.Close()
}

// bindReadOnly mounts the file or directory held by f at path, with every
// mount beneath it, and makes all of them read-only, nosuid and nodev.
func bindReadOnly(f *os.File, path string) error {
	if err := unix.Mount(fdPath(f), path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind mount: %w", err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(-1, path, unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("make the bind mount read-only (mount_setattr, Linux 5.12 or later): %w", err)
	}
	return nil
}

func fdPath(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// pivot makes newRoot the root of this mount namespace and detaches the
// host's tree: pivot_root(".", ".") stacks the old root on the new one,
// and the lazy unmount takes it (and every mount under it) away.
func pivot(newRoot string) error {
	if err := unix.Chdir(newRoot); err != nil {
		return fmt.Errorf("isolate: enter the child's root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("isolate: pivot_root into the child's root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("isolate: detach the host's tree from the child's root: %w", err)
	}
	return unix.Chdir("/")
}

// mountDev puts a tmpfs at dir holding the held device nodes (bound, each
// the one mount where device nodes may be opened) and the fd links, then
// makes the tmpfs read-only.
func mountDev(dir string, devs []entry) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=64k"); err != nil {
		return fmt.Errorf("mount a tmpfs: %w", err)
	}
	for _, d := range devs {
		p := filepath.Join(dir, filepath.Base(d.path))
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount(fdPath(d.held), p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s: %w", d.path, err)
		}
		// The bind keeps the host mount's nodev; a device node is what it is for.
		if err := unix.MountSetattr(-1, p, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_RDONLY, Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC}); err != nil {
			return fmt.Errorf("allow the device node %s: %w", d.path, err)
		}
	}
	for _, l := range devLinks {
		if err := os.Symlink(l[1], filepath.Join(dir, l[0])); err != nil {
			return err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "shm"), 0o755); err != nil {
		return err
	}
	if err := mountPts(dir); err != nil {
		return err
	}
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("make it read-only: %w", err)
	}
	return nil
}

// mountPts gives the child's /dev pseudo-terminals of its own, as bwrap's
// --dev does: a new devpts instance on dir/pts (none of the host's
// terminals are in it) and dir/ptmx its multiplexer (the persistent shell
// runs on one).
func mountPts(dir string) error {
	pts := filepath.Join(dir, "pts")
	if err := os.Mkdir(pts, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("devpts", pts, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620"); err != nil {
		return fmt.Errorf("mount a devpts instance of its own: %w", err)
	}
	return os.Symlink("pts/ptmx", filepath.Join(dir, "ptmx"))
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

// rootPaths are the host paths a child's root holds besides the shared
// ones and the device nodes: the system directories and the kept /etc
// entries (the made ones left out).
func rootPaths() (system, etc []string) {
	for _, d := range systemDirs {
		system = append(system, "/"+d)
	}
	names, _ := os.ReadDir("/etc")
	for _, n := range names {
		if EtcAllowed(n.Name()) && !slices.Contains(etcMade, n.Name()) {
			etc = append(etc, "/etc/"+n.Name())
		}
	}
	return system, etc
}

// HostPaths are the host's files and directories a child's root binds
// besides the shared ones (the symlinks of rootPaths are recreated, not
// bound, and point into these).
func HostPaths() []string {
	system, etc := rootPaths()
	var out []string
	for _, p := range append(system, etc...) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			out = append(out, p)
		}
	}
	return out
}
