package isolate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/replay/asuser"
	"github.com/dshsim/dshsim/harness/replay/hostile"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

func TestMain(m *testing.M) {
	if os.Getenv(allocateEnv) != "" {
		fmt.Println(allocate())
		os.Exit(0)
	}
	if os.Getenv(undumpableEnv) != "" {
		os.Exit(undumpableHost())
	}
	os.Exit(sandboxtest.Main(m))
}

// The test handlers are served from init, as every handler is: the isolated
// child re-executes this test binary and must become the handler before
// TestMain runs the tests (package isolate, Serve).
func init() {
	isolate.Serve("test-read-share", readShare)
	isolate.Serve("test-confine", confine)
	isolate.Serve("test-sleep", func(ctx context.Context, req []byte) ([]byte, error) {
		d, err := time.ParseDuration(string(req))
		if err != nil {
			return nil, err
		}
		time.Sleep(d)
		return []byte("slept"), nil
	})
}

// undumpableEnv makes this test binary a host that is not dumpable (as the
// agent is once the in-process sandbox runs) and starts one child.
const undumpableEnv = "DSHSIM_ISOLATE_TEST_UNDUMPABLE"

func undumpableHost() int {
	if _, err := inproc.New(); err != nil { // makes this process not dumpable
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out, err := isolate.Run(context.Background(), "test-sleep", []byte("1ms"), isolate.Options{Stderr: os.Stderr})
	if err != nil || string(out) != "slept" {
		fmt.Fprintf(os.Stderr, "a host that is not dumpable: %q, %v\n", out, err)
		return 1
	}
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		fmt.Fprintf(os.Stderr, "after the start the process is dumpable (%d, %v)\n", d, err)
		return 1
	}
	return 0
}

// TestAHostThatIsNotDumpableStartsItsChild: a process the in-process
// sandbox made not dumpable still starts contained children, as a normal
// user too (whose start into a new user namespace needs the process
// dumpable for a moment: inproc.WhileDumpable), and is not dumpable after.
func TestAHostThatIsNotDumpableStartsItsChild(t *testing.T) {
	isolate.Require(t)
	sandboxtest.RequireLandlock(t, 1) // inproc.New makes the host not dumpable
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), undumpableEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// TestChildOutlivesTheThreadThatStartedIt: the child dies with its parent
// (PDEATHSIG), which the kernel ties to the thread that started it, not the
// process; a process whose goroutines end their threads (the in-process
// Landlock path locks a thread, confines it and lets it die) must not kill a
// running child that way. Goroutines that lock a thread and end keep
// ending threads while children run.
func TestChildOutlivesTheThreadThatStartedIt(t *testing.T) {
	isolate.Require(t)
	stop := make(chan struct{})
	var churn sync.WaitGroup
	for range 4 {
		churn.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				done := make(chan struct{})
				go func() {
					runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
					close(done)
				}()
				<-done
			}
		})
	}
	defer func() { close(stop); churn.Wait() }()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			out, err := isolate.Run(context.Background(), "test-sleep", []byte("1500ms"), isolate.Options{Stderr: io.Discard})
			if err == nil && string(out) != "slept" {
				err = fmt.Errorf("response %q", out)
			}
			errs[i] = err
		})
	}
	waittest.Within(t, waittest.BatchDeadline, "the children to end", wg.Wait)
	for i, err := range errs {
		if err != nil {
			t.Errorf("child %d: %v", i, err)
		}
	}
}

func hostTmpDev(t *testing.T) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/tmp", &st); err != nil {
		t.Fatal(err)
	}
	return st.Dev
}

// runIDs are the uid and gid a child of this process runs as: its own, or
// nobody's for root.
func runIDs() (int, int) {
	if os.Getuid() == 0 {
		return 65534, 65534
	}
	return os.Getuid(), os.Getgid()
}

// TestChildHasAPrivateTmp: the child is in a PID namespace of its own, which
// its /proc shows (PID 1 of the namespace, its parent, is the one that set
// it up), its /tmp is a tmpfs of the default size on another device, a
// file it creates there never reaches the host's /tmp, it runs as one id
// mapped to itself (nobody's, run by root, with no supplementary group),
// it holds no capability and cannot gain one (the bounding set empty,
// no_new_privs set), and it is not dumpable.
func TestChildHasAPrivateTmp(t *testing.T) {
	isolate.Require(t)
	const marker = "dshsim-isolate-probe-marker"
	f, err := isolate.Probe(context.Background(), isolate.ProbeRequest{File: marker})
	if err != nil {
		t.Fatal(err)
	}
	if f.PPID != 1 {
		t.Errorf("child's parent is pid %d, want 1 (PID 1 of a namespace of its own)", f.PPID)
	}
	if f.ProcSelf != strconv.Itoa(f.PID) {
		t.Errorf("the child's /proc/self is %q, its pid %d: its /proc is not its PID namespace's own", f.ProcSelf, f.PID)
	}
	if !f.TmpIsTmpfs || f.TmpDev == hostTmpDev(t) {
		t.Errorf("child /tmp: tmpfs %v, device %d (host %d): want a tmpfs of its own", f.TmpIsTmpfs, f.TmpDev, hostTmpDev(t))
	}
	if f.TmpSize != isolate.DefaultTmpSize {
		t.Errorf("child /tmp holds %d bytes, want the bound %d", f.TmpSize, isolate.DefaultTmpSize)
	}
	if f.Wrote != "/tmp/"+marker {
		t.Errorf("probe wrote %q", f.Wrote)
	}
	if _, err := os.Lstat("/tmp/" + marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the child's /tmp/%s is on the host (%v)", marker, err)
	}
	uid, gid := runIDs()
	if f.UID != uid || f.GID != gid || f.UIDMap != fmt.Sprintf("%d %d 1", uid, uid) {
		t.Errorf("child uid %d, gid %d, uid map %q; want %d, %d and %q", f.UID, f.GID, f.UIDMap, uid, gid, fmt.Sprintf("%d %d 1", uid, uid))
	}
	if os.Getuid() == 0 && len(f.Groups) != 0 {
		t.Errorf("root's child holds supplementary groups %v", f.Groups)
	}
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if f.Caps[k] != "0000000000000000" {
			t.Errorf("%s = %q in the child: want every capability set empty", k, f.Caps[k])
		}
	}
	if f.NoNewPrivs != "1" || f.Dumpable != 0 {
		t.Errorf("child no_new_privs %q, dumpable %d: want 1 and 0", f.NoNewPrivs, f.Dumpable)
	}
}

// TestChildIsContained: nothing of the host outside the child's root is
// there (a directory the test itself can write is not found), a shared
// directory is read-only (even one everybody may write), a sysctl cannot
// be written back with its own value, even by root, the child cannot make
// its / writable again, and it has a network namespace of its own whose
// only interface is loopback, up.
func TestChildIsContained(t *testing.T) {
	isolate.Require(t)
	host := hostDir(t)
	target := filepath.Join(host, "from-the-child")
	shared := sharedDir(t)
	inShared := filepath.Join(shared, "from-the-child")
	sysctl := "/proc/sys/kernel/domainname"
	f, err := isolate.Probe(context.Background(), isolate.ProbeRequest{Create: []string{target, inShared}, Overwrite: []string{sysctl}, Remount: []string{"/"}, Share: []string{shared}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{target, inShared, "overwrite " + sysctl, "remount /"} {
		if got, ok := f.Writes[k]; !ok || got == "" {
			t.Errorf("%s: the child succeeded (%q, tried %v)", k, got, ok)
		}
	}
	if !strings.Contains(f.Writes[target], "no such file or directory") {
		t.Errorf("creating %s: %q, want no such file or directory (the host's tree is not in the child's root)", target, f.Writes[target])
	}
	if !strings.Contains(f.Writes[inShared], "read-only file system") {
		t.Errorf("creating %s: %q, want read-only file system", inShared, f.Writes[inShared])
	}
	assertEmpty(t, host)
	assertEmpty(t, shared)
	if f.NetNS == "" || f.NetNS == hostNetNS(t) {
		t.Errorf("the child's network namespace is %q, the host's %q", f.NetNS, hostNetNS(t))
	}
	if strings.Join(f.Interfaces, ",") != "lo up" {
		t.Errorf("the child's interfaces: %q, want only loopback, up", f.Interfaces)
	}
	if !strings.Contains(f.Seen.Network, "loopback") {
		t.Errorf("the run reports its network as %q", f.Seen.Network)
	}
}

// sharedDir is a fresh directory everybody may write, outside /tmp,
// removed at the end.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := sandboxtest.TempDir(t, "dshsim-shared-")
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostNetworkKeepsTheRest: a child with HostNetwork is in the host's
// network namespace, and nothing else of the host is there all the same.
func TestHostNetworkKeepsTheRest(t *testing.T) {
	isolate.Require(t)
	host := hostDir(t)
	target := filepath.Join(host, "from-the-child")
	f, err := isolate.Probe(context.Background(), isolate.ProbeRequest{Create: []string{target}, HostNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.NetNS != hostNetNS(t) {
		t.Errorf("the child's network namespace is %q, want the host's %q", f.NetNS, hostNetNS(t))
	}
	if !strings.Contains(f.Writes[target], "no such file or directory") {
		t.Errorf("creating %s: %q, want no such file or directory", target, f.Writes[target])
	}
	if f.Seen.Network != "the host's network namespace" {
		t.Errorf("the run reports its network as %q", f.Seen.Network)
	}
	assertEmpty(t, host)
}

// hostDir is a fresh directory of the host outside /tmp, made by the test
// (so the test's user can write it), removed at the end.
func hostDir(t *testing.T) string {
	t.Helper()
	return sandboxtest.TempDir(t, "dshsim-contained-")
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	for _, left := range sandboxtest.Leftovers(dir) {
		t.Errorf("the child wrote %s on the host", left)
	}
}

func hostNetNS(t *testing.T) string {
	t.Helper()
	ns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestConcurrentChildrenHaveTheirOwnTmp: children running at once each create
// the same fixed path with O_EXCL; in a shared /tmp all but one would fail.
func TestConcurrentChildrenHaveTheirOwnTmp(t *testing.T) {
	isolate.Require(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = isolate.Probe(context.Background(), isolate.ProbeRequest{File: "dshsim-isolate-fixed-path"})
		})
	}
	waittest.Within(t, waittest.BatchDeadline, "the isolated children to end", wg.Wait)
	for i, err := range errs {
		if err != nil {
			t.Errorf("child %d: %v", i, err)
		}
	}
}

func readShare(_ context.Context, req []byte) ([]byte, error) {
	dir := string(req)
	data, err := os.ReadFile(filepath.Join(dir, "seed.txt"))
	if err != nil {
		return nil, err
	}
	werr := os.WriteFile(filepath.Join(dir, "written.txt"), []byte("x"), 0o644)
	return json.Marshal(map[string]string{"read": string(data), "write": fmt.Sprint(werr)})
}

// TestSharedPathsAreVisibleReadOnly: a directory under the host's /tmp that
// the caller shares is seen at the same path, and cannot be written.
func TestSharedPathsAreVisibleReadOnly(t *testing.T) {
	isolate.Require(t)
	// Under the host's /tmp itself, whatever TMPDIR says: that is the
	// directory the child replaces.
	dir, err := os.MkdirTemp("/tmp", "dshsim-isolate-share-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // root's child runs as nobody
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "seed.txt"), []byte("seed"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := isolate.Run(context.Background(), "test-read-share", []byte(dir), isolate.Options{Share: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got["read"] != "seed" || !strings.Contains(got["write"], "read-only file system") {
		t.Errorf("shared dir in the child: %v; want the seed read and the write refused (read-only file system)", got)
	}
	if _, err := isolate.Run(context.Background(), "test-read-share", []byte(dir), isolate.Options{}); err == nil {
		t.Error("an unshared directory under /tmp was visible in the child")
	}
}

// TestUnregisteredNameIsRefused: Run refuses a name no init registered
// (the child would otherwise run the binary's main).
func TestUnregisteredNameIsRefused(t *testing.T) {
	_, err := isolate.Run(context.Background(), "nobody-registered-this", nil, isolate.Options{})
	if err == nil || !strings.Contains(err.Error(), `no handler "nobody-registered-this"`) {
		t.Fatalf("err = %v", err)
	}
}

// readyWriter cancels once the child wrote its ready line.
type readyWriter struct {
	once   sync.Once
	cancel func()
}

func (w *readyWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "ready") {
		w.once.Do(w.cancel)
	}
	return len(p), nil
}

// TestCancelReachesTheHandler: cancelling Run's context while the handler
// runs cancels the handler's context (SIGTERM, which PID 1 handles), and the
// handler's answer still comes back.
func TestCancelReachesTheHandler(t *testing.T) {
	isolate.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := waittest.Call(t, "the cancelled child to answer", func() error {
		_, err := isolate.Run(ctx, "test-confine", []byte(`{"wait":true}`), isolate.Options{Stderr: &readyWriter{cancel: cancel}})
		return err
	})
	if err == nil || err.Error() != "context canceled" {
		t.Fatalf("err = %v, want the handler's own context canceled", err)
	}
}

type confineReq struct {
	Backend, Launcher, Outside string
	Wait                       bool
}

type confineResp struct {
	Unavailable string
	Inside      bool
	Stderr      string
}

// confine runs, inside the child, one command under the named backend in
// workspace-write: it writes into its workspace (allowed) and into Outside
// (denied), and reports what it saw.
func confine(ctx context.Context, data []byte) ([]byte, error) {
	var req confineReq
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, err
	}
	if req.Wait {
		fmt.Fprintln(os.Stderr, "ready")
		<-ctx.Done()
		return nil, ctx.Err()
	}
	ws, err := os.MkdirTemp("", "ws-")
	if err != nil {
		return nil, err
	}
	p, err := sandbox.NewProvider(sandbox.Config{Chain: []string{req.Backend}, LauncherPath: req.Launcher})
	if err != nil {
		return nil, err
	}
	c, err := p.Confine(ctx, []string{"sh", "-c", "echo in > in.txt; echo out > " + req.Outside + "/escaped"}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
	if err != nil {
		return json.Marshal(confineResp{Unavailable: err.Error()})
	}
	defer c.Close()
	argv, files := c.Inherit(nil) // bwrap binds the workspace through a descriptor the command inherits
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.ExtraFiles = ws, files
	var stderr strings.Builder
	cmd.Stderr = &stderr
	_ = cmd.Run()
	_, ierr := os.Stat(filepath.Join(ws, "in.txt"))
	return json.Marshal(confineResp{Inside: ierr == nil, Stderr: stderr.String()})
}

// TestSandboxBackendsWorkInside: bwrap and the Landlock runner confine a
// command run from inside the isolated child: the workspace write happens,
// the write outside (a shared host directory everybody may write, checked
// from the host) does not.
func TestSandboxBackendsWorkInside(t *testing.T) {
	isolate.Require(t)
	launcher := sandboxtest.Runner(t)
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			outside := sharedDir(t)
			req, _ := json.Marshal(confineReq{Backend: backend, Launcher: launcher, Outside: outside})
			out, err := isolate.Run(context.Background(), "test-confine", req, isolate.Options{Share: []string{launcher, outside}})
			if err != nil {
				t.Fatal(err)
			}
			var got confineResp
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if got.Unavailable != "" {
				t.Skipf("%s is not usable on this machine: %s", backend, got.Unavailable)
			}
			if !got.Inside {
				t.Errorf("the workspace write did not happen under %s (stderr %q)", backend, got.Stderr)
			}
			if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
				t.Errorf("the write outside the workspace went through under %s", backend)
			}
			if !strings.Contains(strings.ToLower(got.Stderr), "read-only file system") && !strings.Contains(strings.ToLower(got.Stderr), "permission denied") {
				t.Errorf("stderr %q shows no denial", got.Stderr)
			}
		})
	}
}

// TestAsAnotherUser runs the tests above as uid 65534 (after this root run,
// on the same machine): a user without privileges gets the same isolation
// through a user namespace, and bwrap and Landlock still work inside.
func TestAsAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root (CAP_SETUID) to run the tests as uid 65534")
	}
	isolate.Require(t)
	tests := []string{"TestChildHasAPrivateTmp", "TestChildIsContained", "TestHostNetworkKeepsTheRest", "TestConcurrentChildrenHaveTheirOwnTmp",
		"TestSharedPathsAreVisibleReadOnly", "TestSandboxBackendsWorkInside", "TestChildSeesTheLeastHost", "TestEnvIsAnAllowlist",
		"TestNoHostSocketOrFIFOIsReachable", "TestRunStageIsOutOfReach", "TestStoppedOrKilledRunStageIsAnError"}
	if !raceDetector {
		tests = append(tests, "TestCommandBounds")
	}
	asuser.RunTests(t, asuser.Run{
		Tests:       tests,
		Executables: map[string]string{sandboxtest.RunnerEnv: sandboxtest.Runner(t), hostile.ProgramEnv: hostile.Program(t)},
	})
}

// TestASweepLeavesTheChild: a contained child runs in a session of its
// own, which a sweep of spawn's subreaper in the same process would take
// for a call's orphan and kill; spawn's calls ending meanwhile (each
// unconfined one is swept) leave it running to its answer.
func TestASweepLeavesTheChild(t *testing.T) {
	isolate.Require(t)
	done := make(chan error, 1)
	go func() {
		out, err := isolate.Run(context.Background(), "test-sleep", []byte("2s"), isolate.Options{Stderr: io.Discard})
		if err == nil && string(out) != "slept" {
			err = fmt.Errorf("answer %q", out)
		}
		done <- err
	}()
	ws := t.TempDir()
	for i := 0; i < 10; i++ {
		if _, err := spawn.Run(context.Background(), spawn.Request{Argv: []string{"sleep", "0.1"}, Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}, OutputDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("the contained child, swept around: %v", err)
	}
}
