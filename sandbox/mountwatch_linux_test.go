//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// The mount watch's tests mount, so they run in a child of the test binary
// in a mount namespace of its own (and, for a normal user, a user namespace
// in which it holds CAP_SYS_ADMIN over those mounts): their mounts reach no
// other process. childTestEnv names the test a child runs; nsHelperEnv makes
// the child run the namespace scenario from TestMain on the main thread;
// peerMountEnv makes it bind a directory and exit.
const (
	childTestEnv = "DSHSIM_MOUNTWATCH_TEST"
	nsHelperEnv  = "DSHSIM_MOUNTWATCH_NS"
	peerMountEnv = "DSHSIM_MOUNTWATCH_PEER"
)

// TestMain runs the tests, or, in a child started by
// TestMountWatchFollowsTheNamespace, its scenario on the main thread.
func TestMain(m *testing.M) {
	if src := os.Getenv(peerMountEnv); src != "" {
		// TestMountWatchSeesAPropagatedMount's peer: bind src at the path.
		if err := unix.Mount(src, os.Getenv(peerMountEnv+"_AT"), "", unix.MS_BIND, ""); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(nsHelperEnv) != "" {
		os.Exit(namespaceScenario(os.Getenv(nsHelperEnv), os.Getenv(nsHelperEnv+"_INNER"), os.Getenv(nsHelperEnv+"_SRC")))
	}
	os.Exit(m.Run())
}

// inOwnMountNamespace is true in the child that runs test t (its mounts
// private there); in the test itself it runs that child and fails t
// unless the child's test passed, and is false.
func inOwnMountNamespace(t *testing.T) bool {
	if os.Getenv(childTestEnv) == t.Name() {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			t.Fatalf("make the child's mounts private: %v", err)
		}
		return true
	}
	out, err := inMountNamespace(t, []string{childTestEnv + "=" + t.Name()}, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("in its own mount namespace: %v\n%s", err, out)
	}
	return false
}

// inMountNamespace runs this test binary with args and env added, in a
// mount namespace of its own (and a user namespace of its own, mapping this
// uid and gid to 0, unless this process is root), and returns its output.
// It skips t when the namespaces cannot be made, naming what is missing.
func inMountNamespace(t *testing.T, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	if cmd.Process == nil && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EACCES)) {
		t.Skipf("needs a mount namespace of its own (CAP_SYS_ADMIN, or unprivileged user namespaces): %v", err)
	}
	return out, err
}

// mountAt bind-mounts src at dir (unmounted at the test's end if still
// there, before its temp dirs are removed).
func mountAt(t *testing.T, src, dir string) {
	t.Helper()
	if err := unix.Mount(src, dir, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s at %s: %v", src, dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

// newWatch is a mount watch of its own for t, closed at its end.
func newWatch(t *testing.T) *mountWatch {
	w := &mountWatch{fd: -1}
	t.Cleanup(w.close)
	return w
}

// wantPoint fails t unless w's next table reads without error and shows a
// mount at point exactly when want.
func wantPoint(t *testing.T, w *mountWatch, point string, want bool, what string) {
	t.Helper()
	m, err := w.table()
	if err != nil || hasPoint(m, point) != want {
		t.Fatalf("%s: the table (err %v) shows a mount at %s: %v, want %v", what, err, point, hasPoint(m, point), want)
	}
}

// unmountAt unmounts dir.
func unmountAt(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Unmount(dir, 0); err != nil {
		t.Fatalf("unmount %s: %v", dir, err)
	}
}

// hasPoint reports whether the table has a mount at point.
func hasPoint(mounts []procfs.Mount, point string) bool {
	return slices.ContainsFunc(mounts, func(m procfs.Mount) bool { return m.Point == point })
}

// workspaceWithMountPoint makes a workspace, a directory inner in it and a
// directory src outside it to bind there, all canonical.
func workspaceWithMountPoint(t *testing.T) (ws, inner, src string) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, src = filepath.Join(base, "ws"), filepath.Join(base, "src")
	inner = filepath.Join(ws, "inner")
	for _, d := range []string{ws, inner, src} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ws, inner, src
}

// TestMountWatchSeesEveryChange: the kept table is served while the mount
// table is unchanged (one read for two calls), and a mount or an unmount
// made after it was kept is in the next table, so Validate refuses a
// workspace as soon as a mount lies beneath it and grants it again once it
// is gone. Fails if the watch serves its table without asking the kernel
// whether it changed.
func TestMountWatchSeesEveryChange(t *testing.T) {
	if !inOwnMountNamespace(t) {
		return
	}
	ws, inner, src := workspaceWithMountPoint(t)
	w := newWatch(t)
	policy := Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws}
	if _, err := Validate([]string{"true"}, policy); err != nil {
		t.Fatalf("Validate before any mount: %v", err)
	}
	for i := range 2 {
		wantPoint(t, w, inner, false, fmt.Sprintf("call %d before the mount", i))
	}
	if w.reads != 1 {
		t.Errorf("two calls on an unchanged table read it %d times, want once (the second is the kept table)", w.reads)
	}
	for round := range 50 {
		mountAt(t, src, inner)
		wantPoint(t, w, inner, true, fmt.Sprintf("round %d, after the mount", round))
		if _, err := Validate([]string{"true"}, policy); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "it contains the mount point "+inner+" ") {
			t.Fatalf("round %d: Validate after the mount = %v, want the refusal naming %s", round, err, inner)
		}
		unmountAt(t, inner)
		wantPoint(t, w, inner, false, fmt.Sprintf("round %d, after the unmount", round))
		if _, err := Validate([]string{"true"}, policy); err != nil {
			t.Fatalf("round %d: Validate after the unmount: %v", round, err)
		}
	}
}

// TestMountWatchSeesAPropagatedMount: a mount made in another mount
// namespace that propagates into this one (the workspace a shared mount, the
// other namespace its peer) is in the next table, though no call of this
// process made it.
func TestMountWatchSeesAPropagatedMount(t *testing.T) {
	if !inOwnMountNamespace(t) {
		return
	}
	ws, inner, src := workspaceWithMountPoint(t)
	mountAt(t, ws, ws)
	if err := unix.Mount("", ws, "", unix.MS_SHARED, ""); err != nil {
		t.Fatalf("make %s shared: %v", ws, err)
	}
	w := newWatch(t)
	wantPoint(t, w, inner, false, "before the peer's mount")
	// A child in a new mount namespace (a copy whose ws is a peer of ours)
	// binds src at inner there.
	peer := exec.Command(os.Args[0])
	peer.Env = append(os.Environ(), peerMountEnv+"="+src, peerMountEnv+"_AT="+inner)
	peer.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if out, err := peer.CombinedOutput(); err != nil {
		t.Fatalf("the peer's mount: %v\n%s", err, out)
	}
	t.Cleanup(func() { unix.Unmount(inner, unix.MNT_DETACH) })
	wantPoint(t, w, inner, true, "after the peer's mount, propagated here")
}

// TestMountWatchSeesAMountDuringItsRead: a mount made after the table was
// read, before it is kept, is in the next call's table. Fails if the watch
// takes the kernel's report of a change after reading (the report of that
// mount would be spent on a table that lacks it).
func TestMountWatchSeesAMountDuringItsRead(t *testing.T) {
	if !inOwnMountNamespace(t) {
		return
	}
	_, inner, src := workspaceWithMountPoint(t)
	w := newWatch(t)
	// The first read (the file just opened), then a read of a kept table
	// that a change (src bound on itself) made stale.
	for _, stale := range []bool{false, true} {
		if stale {
			mountAt(t, src, src)
		}
		w.afterRead = func() { mountAt(t, src, inner); w.afterRead = nil }
		wantPoint(t, w, inner, false, fmt.Sprintf("stale=%v, the table read before the mount", stale))
		wantPoint(t, w, inner, true, fmt.Sprintf("stale=%v, the next table", stale))
		unmountAt(t, inner)
		wantPoint(t, w, inner, false, fmt.Sprintf("stale=%v, after the unmount", stale))
	}
}

// TestMountWatchChecksItsDescriptor: when the descriptor's number names
// another file (code elsewhere closed it and the number was reused), the
// watch reads the table afresh rather than trust a poll of that file.
// Fails without the check of the descriptor's device and inode.
func TestMountWatchChecksItsDescriptor(t *testing.T) {
	if !inOwnMountNamespace(t) {
		return
	}
	_, inner, src := workspaceWithMountPoint(t)
	w := newWatch(t)
	if _, err := w.table(); err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Dup2(int(other.Fd()), w.fd); err != nil {
		t.Fatal(err)
	}
	mountAt(t, src, inner)
	wantPoint(t, w, inner, true, "with its descriptor's number reused, after a mount")
}

// TestMountWatchFollowsTheNamespace: when this process (its main thread,
// which /proc/self names) moves to another mount namespace, the table is
// that namespace's: a workspace holding a mount made there is refused
// though the namespace the kept table was read in never changed. Fails if
// the watch keys its table on nothing but the kernel's change reports (the
// descriptor reads the first namespace). The scenario runs in a child's
// main thread (namespaceScenario).
func TestMountWatchFollowsTheNamespace(t *testing.T) {
	ws, inner, src := workspaceWithMountPoint(t)
	for try := 0; ; try++ {
		out, err := inMountNamespace(t, []string{nsHelperEnv + "=" + ws, nsHelperEnv + "_INNER=" + inner, nsHelperEnv + "_SRC=" + src})
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 && try < 5 {
			continue // the scenario did not start on the main thread: again
		}
		if err != nil {
			t.Fatalf("the scenario in a child: %v\n%s", err, out)
		}
		return
	}
}

// namespaceScenario is TestMountWatchFollowsTheNamespace's child, on the
// main thread: the table is kept, the main thread moves to a new mount
// namespace and binds src at inner, beneath the workspace ws, there, and
// Validate must refuse ws. Exit 0 if so, 1 with the reason if not, 3 when
// not on the main thread.
func namespaceScenario(ws, inner, src string) int {
	runtime.LockOSThread()
	if unix.Gettid() != os.Getpid() {
		return 3
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		return 1
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("make the mounts private: %v", err)
	}
	policy := Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws}
	for range 2 {
		if _, err := Validate([]string{"true"}, policy); err != nil {
			return fail("Validate before the move: %v", err)
		}
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fail("unshare the main thread's mount namespace: %v", err)
	}
	if err := unix.Mount(src, inner, "", unix.MS_BIND, ""); err != nil {
		return fail("bind %s at %s in the new namespace: %v", src, inner, err)
	}
	if _, err := Validate([]string{"true"}, policy); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "it contains the mount point "+inner+" ") {
		return fail("Validate in the new namespace = %v, want the refusal naming %s", err, inner)
	}
	return 0
}
