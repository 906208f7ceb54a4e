package escape

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// Outcome is one cell of the result table.
type Outcome string

// Outcomes.
const (
	// Blocked: the host saw no change outside what the mode allows.
	Blocked Outcome = "blocked"
	// GotThrough: the host saw a change the mode forbids.
	GotThrough Outcome = "GOT"
	// NotApplicable: the attempt cannot run under this identity or backend.
	NotApplicable Outcome = "n/a"
	// RunnerFailed: the runner failed before running the attempt (nothing ran).
	RunnerFailed Outcome = "runner-failed"
)

// Identity is the user an attempt runs as.
type Identity struct {
	// Name is "root" or "user".
	Name string
	// UID and GID are the user's (65534 for "user" when the harness is root).
	UID, GID int
}

// Root and User are the two identities of the corpus.
var (
	Root = Identity{Name: "root"}
	User = Identity{Name: "user", UID: 65534, GID: 65534}
)

// Self is the identity of this process: root, or an unprivileged user.
func Self() Identity {
	if os.Geteuid() == 0 {
		return Root
	}
	return Identity{Name: User.Name, UID: os.Geteuid(), GID: os.Getegid()}
}

// Identities returns root and the unprivileged user (uid 65534, run by an
// agent process of that uid, see [RunAs]) when this process is root, else
// just this process's own unprivileged identity.
func Identities() []Identity {
	if os.Geteuid() == 0 {
		return []Identity{Root, User}
	}
	return []Identity{Self()}
}

// Config is what a corpus run needs.
type Config struct {
	// Base is a scratch directory outside /tmp (bwrap hides /tmp, Landlock
	// grants all of it) that this process's identity can write.
	Base string
	// Probe is the path of a built escape-probe, executable by every identity.
	Probe string
	// Timeout bounds one attempt (default 30s).
	Timeout time.Duration
	// Workers is how many attempts run at once (default 8; attempts with a
	// process-wide fixture run alone, see [Attempt.Exclusive]).
	Workers int
	// Node runs the run_code program attempts ([NodeFor]); nil makes them
	// n/a.
	Node *noderuntime.Runtime
	// Runner is the landlock-run binary a replay of a hostile recording
	// uses (executable by every identity); Transcripts the directory of the
	// upstream recordings they are made from ([ClassRecording]).
	Runner, Transcripts string
	// Logf, if set, receives progress.
	Logf func(format string, args ...any)
}

// Result is one attempt under one backend, identity and mode.
type Result struct {
	Attempt  string
	Backend  string
	Identity string
	Mode     sandbox.Mode
	Outcome  Outcome
	// Why is the n/a reason, the runner-failure detail, or the admission text.
	Why string
	// Admitted is set for GotThrough: the backend's report admits it.
	Admitted bool
	// Notice says the runner's partial-enforcement line was on stderr.
	Notice bool
	// Ungoverned is what the run's own report admits it cannot govern
	// (sandbox.Report.Ungoverned); nil when the run had no report.
	Ungoverned []string
	Exit       int
	Stdout     string
	Stderr     string
	Changes    []Change
}

// MkBase makes a scratch base directory under the scratch root
// (sandboxtest.ScratchRoot: /var/tmp by default; world-traversable, so the
// unprivileged identity can reach its own subdirectories).
func MkBase() (string, error) {
	d, err := sandboxtest.MkdirScratch("dshsim-escape-")
	if err != nil {
		return "", err
	}
	return d, os.Chmod(d, 0o755)
}

var seq atomic.Int64

// exclusive serialises the attempts whose fixture is process-wide (see
// [Attempt.Exclusive]): they hold it for writing, every other run (and the
// start of an agent process) for reading.
var exclusive sync.RWMutex

// The harness's SIGUSR1 trap, set up once: a confined command that can
// signal the harness shows here instead of killing it.
var (
	trapOnce sync.Once
	trapped  chan os.Signal
)

func trapSignal() <-chan os.Signal {
	trapOnce.Do(func() {
		trapped = make(chan os.Signal, 16)
		signal.Notify(trapped, syscall.SIGUSR1)
	})
	return trapped
}

// runDir makes the fresh run directory of one attempt: under cfg.Base, or
// under /tmp for an attempt that needs its workspace there.
func runDir(cfg Config, a Attempt) (string, error) {
	if a.Need(NeedTmpWorkspace) {
		return os.MkdirTemp("/tmp", "dshsim-escape-run-")
	}
	return os.MkdirTemp(cfg.Base, fmt.Sprintf("run%d-", seq.Add(1)))
}

// RunOne runs attempt a under backend b as this process's identity in mode
// m, in a fresh run directory, through spawn (new session, descriptors
// close-on-exec, the backend's confiner: the path every caller takes), and
// checks the host side afterwards. A snapshot that cannot be taken, a
// fixture that cannot be set up or a run directory that cannot be removed is
// an error, never "no change".
func RunOne(ctx context.Context, cfg Config, a Attempt, b Backend, m sandbox.Mode) (Result, error) {
	id := Self()
	res := Result{Attempt: a.Name, Backend: b.Name, Identity: id.Name, Mode: m}
	if why := notApplicable(cfg, a, id); why != "" {
		res.Outcome, res.Why = NotApplicable, why
		return res, nil
	}
	r, err := newAttemptRun(cfg, a, b, m)
	if err != nil {
		return res, err
	}
	err = r.observe(ctx, &res)
	r.stopFixtures()
	r.removeFixtures()
	if cerr := removeRun(r.dir); err == nil {
		err = cerr
	}
	return res, err
}

// notApplicable is why attempt a cannot run here as id ("" when it can).
func notApplicable(cfg Config, a Attempt, id Identity) string {
	switch {
	case a.Need(NeedRoot) && id.Name != Root.Name:
		return "needs root (" + a.Capability + ")"
	case a.Program && cfg.Node == nil:
		return "needs node (run_code's runtime)"
	case a.Class == ClassRecording:
		return containment()
	}
	return ""
}

// attemptRun is one attempt's run directory, the fixtures set up around it
// and what the harness watches while the command runs.
type attemptRun struct {
	cfg                  Config
	a                    Attempt
	b                    Backend
	m                    sandbox.Mode
	dir, ws, out, target string
	// token marks the environment of every process the command starts
	// ([attemptRun.leftovers]).
	token string
	// env is the command's environment; roots the trees the snapshots cover.
	env   []string
	roots map[string]string
	// teardown stops fixtures before the second snapshot; cleanup removes
	// what they made after it.
	teardown, cleanup []func()
	watched
}

// watched is what the harness itself watches during an attempt: its
// SIGUSR1 trap, its abstract socket, the secret it put in the environment,
// its loopback listener, the canary in its memory.
type watched struct {
	signals <-chan os.Signal
	ln      *net.UnixListener
	secret  string
	// tcp listens on the host's loopback at port ([NeedListener]).
	tcp  *net.TCPListener
	port int
	// canary is a fresh secret in this process's memory and held the read
	// end of a pipe, which a command reaching the harness could read or
	// overwrite and write to ([NeedAgent]).
	canary, canaryWas []byte
	held              *os.File
}

// newAttemptRun makes the fresh, seeded run directory of attempt a under
// backend b in mode m.
func newAttemptRun(cfg Config, a Attempt, b Backend, m sandbox.Mode) (*attemptRun, error) {
	dir, err := runDir(cfg, a)
	if err != nil {
		return nil, err
	}
	r := &attemptRun{cfg: cfg, a: a, b: b, m: m, dir: dir, ws: filepath.Join(dir, "ws"), out: filepath.Join(dir, "out")}
	r.target, r.token = filepath.Join(r.out, "target"), newToken()
	r.env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "HOME=" + r.ws,
		"WS=" + r.ws, "OUT=" + r.out, "TARGET=" + r.target, "PROBE=" + cfg.Probe, runEnv + "=" + r.token}
	r.roots = map[string]string{"run": dir}
	if err := os.Chmod(dir, 0o755); err != nil {
		removeRun(dir)
		return nil, err
	}
	if err := layout(dir, r.ws, r.out, r.target); err != nil {
		removeRun(dir)
		return nil, err
	}
	return r, nil
}

// observe sets up the fixtures the attempt needs, runs it between two
// snapshots of the host side and fills res with what it did and the verdict.
func (r *attemptRun) observe(ctx context.Context, res *Result) error {
	for _, f := range fixtures {
		if r.a.Need(f.need) {
			if err := f.set(r, ctx); err != nil {
				return err
			}
		}
	}
	if r.a.Class == ClassRecording {
		return r.observeRecording(ctx, res)
	}
	if r.m == sandbox.DangerFullAccess {
		return r.observeAfter(ctx, res)
	}
	var skip []string
	if r.m == sandbox.WorkspaceWrite {
		skip = []string{"run/ws"}
	}
	before, err := Take(r.roots, skip)
	if err != nil {
		return err
	}
	if err := r.runCommand(ctx, res); err != nil {
		return err
	}
	left := r.leftovers()
	time.Sleep(r.a.Settle)
	seen := append(r.harnessChanges(res), left...)
	return r.conclude(res, before, skip, seen)
}

// conclude stops the fixtures, takes the after snapshot (without skip) and
// judges res by what changed since before and by seen, the changes found
// otherwise.
func (r *attemptRun) conclude(res *Result, before Snapshot, skip []string, seen []Change) error {
	r.stopFixtures()
	after, err := Take(r.roots, skip)
	if err != nil {
		return err
	}
	res.Changes = append(Diff(before, after), seen...)
	judge(r.a, r.b, r.m, res)
	return nil
}

// runCommand runs the attempt's script (bash) or program (run_code's
// runtime) confined by the backend in the mode. A runner that fails before
// running it is the RunnerFailed outcome, any other failure an error.
func (r *attemptRun) runCommand(ctx context.Context, res *Result) error {
	cfg, a, b, m := r.cfg, r.a, r.b, r.m
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	var err error
	if a.Program {
		res.Exit, res.Stdout, res.Stderr, err = runProgram(ctx, cfg.Node, a, b, m, r.ws, r.out, r.target, r.env, timeout)
	} else {
		var sres spawn.Result
		sres, err = spawn.Run(ctx, spawn.Request{Argv: []string{"bash", "-c", a.Script}, Policy: sandbox.Policy{Mode: m, WorkspaceRoot: r.ws},
			Confiner: b.Confiner, Dir: r.ws, Env: r.env, Timeout: timeout, Grace: time.Second, OutputDir: cfg.Base})
		res.Exit, res.Stdout, res.Stderr = sres.ExitCode, sres.Stdout.Text, sres.Stderr.Text
		if sres.Sandbox != nil {
			res.Ungoverned = sres.Sandbox.Ungoverned
		}
	}
	var ue *sandbox.UnavailableError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		res.Outcome, res.Why = RunnerFailed, ue.Detail
		if ue.Detail == "" {
			res.Why = ue.Error()
		}
	default:
		return fmt.Errorf("spawn: %w", err)
	}
	// A program's logs hold what reached the child's own stderr.
	res.Notice = hasLine(res.Stderr, LandlockNotice) || a.Program && hasLine(res.Stdout, LandlockNotice)
	return nil
}

// harnessChanges are the changes the harness itself saw: a signal it
// trapped, a connection to its socket, its secret in the command's output.
func (r *attemptRun) harnessChanges(res *Result) []Change {
	var seen []Change
	if r.signals != nil {
		// The signal reaches the trap asynchronously. A command that says it
		// sent one (exit 0) gets a long wait, so a loaded machine cannot hide
		// it; one that says it failed gets a short one (a command that lies
		// about a signal that did go through still shows, unless the machine
		// takes longer than that to deliver it).
		wait := 300 * time.Millisecond
		if res.Exit == 0 {
			wait = 10 * time.Second
		}
		select {
		case s := <-r.signals:
			seen = append(seen, Change{"harness/signal", "received " + unix.SignalName(s.(syscall.Signal))})
		case <-time.After(wait):
		}
	}
	// A connection the command made is queued on the listener before the
	// command exited, so Accept returns it at once; the deadline only bounds
	// the wait when nothing connected. It is generous because Go checks an
	// expired deadline before it tries the accept at all: on a loaded
	// machine, a 100 ms one passed before the accept ran and a connection
	// that did go through read as blocked. The loopback listener, which no
	// attempt may reach (each hostile recording's wait), gets a shorter one.
	const acceptWait, listenerWait = 2 * time.Second, time.Second
	if r.ln != nil {
		r.ln.SetDeadline(time.Now().Add(acceptWait))
		if c, err := r.ln.Accept(); err == nil {
			c.Close()
			seen = append(seen, Change{"harness/abstract-socket", "accepted a connection"})
		}
	}
	if r.tcp != nil {
		r.tcp.SetDeadline(time.Now().Add(listenerWait))
		if c, err := r.tcp.Accept(); err == nil {
			c.Close()
			seen = append(seen, Change{"harness/listener", "accepted a connection on the host's loopback"})
		}
	}
	if r.secret != "" && strings.Contains(res.Stdout+res.Stderr, r.secret) {
		seen = append(seen, Change{"harness/env", "the command printed DSHSIM_ESCAPE_API_KEY"})
	}
	if r.canary != nil {
		seen = append(seen, r.agentChanges(res)...)
	}
	return seen
}

// judge sets the outcome from the changes seen: none is Blocked (or the
// attempt's own n/a, exit 77, or the runner's failure), any is GotThrough,
// admitted or not by the backend's report.
func judge(a Attempt, b Backend, m sandbox.Mode, res *Result) {
	if res.Outcome == RunnerFailed {
		if len(res.Changes) == 0 {
			return
		}
		res.Outcome = GotThrough // a change is a change, whatever the runner said
	} else if res.Exit == 77 && len(res.Changes) == 0 {
		res.Outcome, res.Why = NotApplicable, strings.TrimSpace(lastLine(res.Stdout))
		return
	}
	if len(res.Changes) == 0 {
		res.Outcome = Blocked
		return
	}
	res.Outcome = GotThrough
	rep := b.Report
	if res.Ungoverned != nil {
		rep.Ungoverned = res.Ungoverned // the run's own admission, for its mode
	}
	res.Admitted, res.Why = Admit(a.Class, a.Effect, m, rep, res.Notice)
}

// stopFixtures stops the running fixtures, the last set up first.
func (r *attemptRun) stopFixtures() {
	for i := len(r.teardown) - 1; i >= 0; i-- {
		r.teardown[i]()
	}
	r.teardown = nil
}

// removeFixtures removes what the fixtures made outside the run directory.
func (r *attemptRun) removeFixtures() {
	for _, f := range r.cleanup {
		f()
	}
	r.cleanup = nil
}

// fixtures are the fixtures an attempt may need (see [Attempt.Needs]), in
// the order they are set up: the order of the variables they add to the
// command's environment.
var fixtures = []struct {
	need string
	set  func(r *attemptRun, ctx context.Context) error
}{
	{NeedPrelink, (*attemptRun).prelink},
	{NeedShm, (*attemptRun).shm},
	{NeedCloexecFD, (*attemptRun).cloexecFD},
	{NeedLeakedFD, (*attemptRun).leakedFD},
	{NeedHolder, (*attemptRun).holder},
	{NeedLoopdev, (*attemptRun).loopdev},
	{NeedSibling, (*attemptRun).sibling},
	{NeedSignal, (*attemptRun).signal},
	{NeedSocket, (*attemptRun).socket},
	{NeedSecret, (*attemptRun).addSecret},
	{NeedRacer, (*attemptRun).racer},
	{NeedGitDir, (*attemptRun).gitDir},
	{NeedListener, (*attemptRun).listener},
	{NeedAgent, (*attemptRun).agent},
}

// agent tells the command $HARNESS_PID, this process, the address and
// length of a fresh secret canary in its memory, and $HARNESS_FD, the read
// end of a pipe it holds: what the command could read or change there, the
// harness sees ([attemptRun.harnessChanges]).
func (r *attemptRun) agent(context.Context) error {
	r.canaryWas = []byte("dshsim-canary-" + rand.Text())
	r.canary = append([]byte(nil), r.canaryWas...)
	rd, wr, err := os.Pipe()
	if err != nil {
		return err
	}
	wr.Close()
	r.held = rd
	r.teardown = append(r.teardown, func() { rd.Close() })
	r.env = append(r.env, "HARNESS_PID="+strconv.Itoa(os.Getpid()),
		fmt.Sprintf("HARNESS_CANARY=%x", uintptr(unsafe.Pointer(&r.canary[0]))), "HARNESS_CANARY_LEN="+strconv.Itoa(len(r.canary)),
		"HARNESS_FD="+strconv.Itoa(int(rd.Fd())))
	return nil
}

// agentChanges are what reached this process's memory and descriptors
// ([NeedAgent]): the canary overwritten or printed, the held pipe written.
func (r *attemptRun) agentChanges(res *Result) []Change {
	var seen []Change
	if !bytes.Equal(r.canary, r.canaryWas) {
		seen = append(seen, Change{"harness/memory", "the canary was overwritten"})
	}
	if strings.Contains(res.Stdout+res.Stderr, string(r.canaryWas)) {
		seen = append(seen, Change{"harness/memory", "the command printed the canary"})
	}
	runtime.KeepAlive(r.canary)
	r.held.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _ := r.held.Read(make([]byte, 64)); n > 0 {
		seen = append(seen, Change{"harness/descriptor", "the held pipe was written through /proc"})
	}
	return seen
}

// prelink makes $WS/prelinked, a hard link of $TARGET.
func (r *attemptRun) prelink(context.Context) error {
	return os.Link(r.target, filepath.Join(r.ws, "prelinked"))
}

// cloexecFD holds $TARGET open, close-on-exec, while the command runs.
func (r *attemptRun) cloexecFD(context.Context) error {
	f, err := os.OpenFile(r.target, os.O_WRONLY|os.O_APPEND, 0) // Go opens close-on-exec
	if err != nil {
		return err
	}
	r.teardown = append(r.teardown, func() { f.Close() })
	return nil
}

// leakedFD holds $TARGET open without close-on-exec while the command runs.
func (r *attemptRun) leakedFD(context.Context) error {
	// As if this process had inherited it: no O_CLOEXEC. The attempt
	// runs alone (Exclusive), so no other spawn can inherit it.
	fd, err := unix.Open(r.target, unix.O_WRONLY|unix.O_APPEND, 0)
	if err != nil {
		return err
	}
	r.teardown = append(r.teardown, func() { unix.Close(fd) })
	return nil
}

// signal tells the command $HARNESS_PID, this process, which traps SIGUSR1.
func (r *attemptRun) signal(context.Context) error {
	r.signals = trapSignal()
	for len(r.signals) > 0 {
		<-r.signals // an earlier run's, which that run already missed
	}
	r.env = append(r.env, "HARNESS_PID="+strconv.Itoa(os.Getpid()))
	return nil
}

// addSecret puts a fresh secret in the command's environment.
func (r *attemptRun) addSecret(context.Context) error {
	r.secret = "dshsim-secret-" + rand.Text()
	r.env = append(r.env, "DSHSIM_ESCAPE_API_KEY="+r.secret)
	return nil
}

// shm makes $SHM, a directory in the host's /dev/shm.
func (r *attemptRun) shm(context.Context) error {
	shm, err := os.MkdirTemp("/dev/shm", "dshsim-escape-")
	if err != nil {
		return err
	}
	r.cleanup = append(r.cleanup, func() { os.RemoveAll(shm) })
	r.roots["shm"] = shm
	r.env = append(r.env, "SHM="+shm)
	return nil
}

// holder starts $HOLDER_PID, an unconfined process holding $TARGET open for
// append.
func (r *attemptRun) holder(context.Context) error {
	f, err := os.OpenFile(r.target, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	h := exec.Command("sleep", "60")
	h.ExtraFiles = []*os.File{f}
	err = h.Start()
	f.Close()
	if err != nil {
		return fmt.Errorf("holder: %w", err)
	}
	r.teardown = append(r.teardown, func() { h.Process.Kill(); h.Wait() })
	r.env = append(r.env, "HOLDER_PID="+strconv.Itoa(h.Process.Pid))
	return nil
}

// loopdev sets up $LOOPDEV, a loop device over $OUT/disk.img, with its
// major and minor numbers.
func (r *attemptRun) loopdev(context.Context) error {
	img := filepath.Join(r.out, "disk.img")
	if err := os.WriteFile(img, make([]byte, 64<<10), 0o644); err != nil {
		return err
	}
	o, err := exec.Command("losetup", "-f", "--show", img).Output()
	if err != nil {
		return fmt.Errorf("losetup: %w", err)
	}
	dev := strings.TrimSpace(string(o))
	r.teardown = append(r.teardown, func() { exec.Command("losetup", "-d", dev).Run() })
	var st syscall.Stat_t
	if err := syscall.Stat(dev, &st); err != nil {
		return err
	}
	r.env = append(r.env, "LOOPDEV="+dev, fmt.Sprintf("LOOPMAJ=%d", unix.Major(st.Rdev)), fmt.Sprintf("LOOPMIN=%d", unix.Minor(st.Rdev)))
	return nil
}

// sibling starts $SIBLING_PID, a second command confined by the same
// backend and mode in a workspace of its own.
func (r *attemptRun) sibling(ctx context.Context) error {
	sws := filepath.Join(r.dir, "sibling")
	if err := os.Mkdir(sws, 0o755); err != nil {
		return err
	}
	sib, err := spawn.Start(ctx, spawn.Request{Argv: []string{"sleep", "60"}, Policy: sandbox.Policy{Mode: r.m, WorkspaceRoot: sws},
		Confiner: r.b.Confiner, Dir: sws, Env: r.env[:2], OutputDir: r.cfg.Base})
	if err != nil {
		return fmt.Errorf("sibling: %w", err)
	}
	r.teardown = append(r.teardown, func() { sib.Kill(); sib.Wait() })
	r.env = append(r.env, "SIBLING_PID="+strconv.Itoa(sib.Pid()))
	return nil
}

// socket listens on $HARNESS_SOCKET, an abstract unix socket.
func (r *attemptRun) socket(context.Context) error {
	name := fmt.Sprintf("dshsim-escape-%d-%d", os.Getpid(), seq.Add(1))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + name, Net: "unix"})
	if err != nil {
		return fmt.Errorf("abstract socket: %w", err)
	}
	r.ln = l
	r.teardown = append(r.teardown, func() { l.Close() })
	r.env = append(r.env, "HARNESS_SOCKET="+name)
	return nil
}

// removeRun removes a run directory, first clearing the immutable and
// append-only flags an attempt may have set (only root can, and only root
// can clear them).
func removeRun(run string) error {
	filepath.WalkDir(run, func(p string, d os.DirEntry, err error) error {
		if err == nil && (d.Type().IsRegular() || d.IsDir()) {
			clearFlags(p)
		}
		return nil
	})
	if err := os.RemoveAll(run); err != nil {
		return fmt.Errorf("remove the run directory: %w", err)
	}
	return nil
}

func clearFlags(p string) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if v, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS); err == nil && v&0x30 != 0 {
		unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, v&^0x30)
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// fixedTime is the mtime every seeded file gets, so an mtime change shows.
var fixedTime = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// seededXattr is the user extended attribute every seeded file carries, so a
// changed value (not only a new name) shows.
const seededXattr, seededValue = "user.dshsim", "original"

func layout(run, ws, out, target string) error {
	files := map[string]string{
		filepath.Join(ws, "inside.txt"):  "inside\n",
		filepath.Join(ws, "sub", "file"): "sub\n",
		target:                           "original\n",
		filepath.Join(out, "other"):      "other\n",
	}
	dirs := []string{ws, filepath.Join(ws, "sub"), out, filepath.Join(out, "empty-dir")}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			return err
		}
		// A file system without user xattrs (an old tmpfs) keeps none to change.
		if err := unix.Setxattr(p, seededXattr, []byte(seededValue), 0); err != nil && !errors.Is(err, unix.ENOTSUP) {
			return fmt.Errorf("seed %s on %s: %w", seededXattr, p, err)
		}
	}
	all := append(append([]string{run}, dirs...), filepath.Join(ws, "inside.txt"), filepath.Join(ws, "sub", "file"), target, filepath.Join(out, "other"))
	for i := len(all) - 1; i >= 0; i-- {
		if err := os.Chtimes(all[i], fixedTime, fixedTime); err != nil {
			return err
		}
	}
	return nil
}
