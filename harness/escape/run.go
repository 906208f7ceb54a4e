package escape

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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
	Notice  bool
	Exit    int
	Stdout  string
	Stderr  string
	Changes []Change
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
func RunOne(ctx context.Context, cfg Config, a Attempt, b Backend, m sandbox.Mode) (res Result, err error) {
	id := Self()
	res = Result{Attempt: a.Name, Backend: b.Name, Identity: id.Name, Mode: m}
	if a.Need(NeedRoot) && id.Name != Root.Name {
		res.Outcome, res.Why = NotApplicable, "needs root ("+a.Capability+")"
		return res, nil
	}
	if a.Program && cfg.Node == nil {
		res.Outcome, res.Why = NotApplicable, "needs node (run_code's runtime)"
		return res, nil
	}
	run, err := runDir(cfg, a)
	if err != nil {
		return res, err
	}
	if err := os.Chmod(run, 0o755); err != nil {
		return res, err
	}
	defer func() {
		if cerr := removeRun(run); cerr != nil && err == nil {
			err = cerr
		}
	}()
	ws, out := filepath.Join(run, "ws"), filepath.Join(run, "out")
	target := filepath.Join(out, "target")
	if err := layout(run, ws, out, target); err != nil {
		return res, err
	}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "HOME=" + ws,
		"WS=" + ws, "OUT=" + out, "TARGET=" + target, "PROBE=" + cfg.Probe}
	roots := map[string]string{"run": run}
	// teardown stops fixtures before the second snapshot; cleanup removes
	// what they made after it.
	var teardown, cleanup []func()
	stopFixtures := func() {
		for i := len(teardown) - 1; i >= 0; i-- {
			teardown[i]()
		}
		teardown = nil
	}
	defer func() {
		stopFixtures()
		for _, f := range cleanup {
			f()
		}
	}()
	if a.Need(NeedPrelink) {
		if err := os.Link(target, filepath.Join(ws, "prelinked")); err != nil {
			return res, err
		}
	}
	if a.Need(NeedShm) {
		shm, err := os.MkdirTemp("/dev/shm", "dshsim-escape-")
		if err != nil {
			return res, err
		}
		cleanup = append(cleanup, func() { os.RemoveAll(shm) })
		roots["shm"] = shm
		env = append(env, "SHM="+shm)
	}
	if a.Need(NeedCloexecFD) {
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0) // Go opens close-on-exec
		if err != nil {
			return res, err
		}
		teardown = append(teardown, func() { f.Close() })
	}
	if a.Need(NeedLeakedFD) {
		// As if this process had inherited it: no O_CLOEXEC. The attempt
		// runs alone (Exclusive), so no other spawn can inherit it.
		fd, err := unix.Open(target, unix.O_WRONLY|unix.O_APPEND, 0)
		if err != nil {
			return res, err
		}
		teardown = append(teardown, func() { unix.Close(fd) })
	}
	if a.Need(NeedHolder) {
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return res, err
		}
		h := exec.Command("sleep", "60")
		h.ExtraFiles = []*os.File{f}
		if err := h.Start(); err != nil {
			f.Close()
			return res, fmt.Errorf("holder: %w", err)
		}
		f.Close()
		teardown = append(teardown, func() { h.Process.Kill(); h.Wait() })
		env = append(env, "HOLDER_PID="+strconv.Itoa(h.Process.Pid))
	}
	if a.Need(NeedLoopdev) {
		img := filepath.Join(out, "disk.img")
		if err := os.WriteFile(img, make([]byte, 64<<10), 0o644); err != nil {
			return res, err
		}
		o, err := exec.Command("losetup", "-f", "--show", img).Output()
		if err != nil {
			return res, fmt.Errorf("losetup: %w", err)
		}
		dev := strings.TrimSpace(string(o))
		teardown = append(teardown, func() { exec.Command("losetup", "-d", dev).Run() })
		var st syscall.Stat_t
		if err := syscall.Stat(dev, &st); err != nil {
			return res, err
		}
		env = append(env, "LOOPDEV="+dev, fmt.Sprintf("LOOPMAJ=%d", unix.Major(st.Rdev)), fmt.Sprintf("LOOPMIN=%d", unix.Minor(st.Rdev)))
	}
	if a.Need(NeedSibling) {
		sws := filepath.Join(run, "sibling")
		if err := os.Mkdir(sws, 0o755); err != nil {
			return res, err
		}
		sib, err := spawn.Start(ctx, spawn.Request{Argv: []string{"sleep", "60"}, Policy: sandbox.Policy{Mode: m, WorkspaceRoot: sws},
			Confiner: b.Confiner, Dir: sws, Env: env[:2], OutputDir: cfg.Base})
		if err != nil {
			return res, fmt.Errorf("sibling: %w", err)
		}
		teardown = append(teardown, func() { sib.Kill(); sib.Wait() })
		env = append(env, "SIBLING_PID="+strconv.Itoa(sib.Pid()))
	}
	var signals <-chan os.Signal
	if a.Need(NeedSignal) {
		signals = trapSignal()
		for len(signals) > 0 {
			<-signals // an earlier run's, which that run already missed
		}
		env = append(env, "HARNESS_PID="+strconv.Itoa(os.Getpid()))
	}
	var ln *net.UnixListener
	if a.Need(NeedSocket) {
		name := fmt.Sprintf("dshsim-escape-%d-%d", os.Getpid(), seq.Add(1))
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + name, Net: "unix"})
		if err != nil {
			return res, fmt.Errorf("abstract socket: %w", err)
		}
		ln = l
		teardown = append(teardown, func() { l.Close() })
		env = append(env, "HARNESS_SOCKET="+name)
	}
	secret := ""
	if a.Need(NeedSecret) {
		secret = "dshsim-secret-" + rand.Text()
		env = append(env, "DSHSIM_ESCAPE_API_KEY="+secret)
	}
	var skip []string
	if m == sandbox.WorkspaceWrite {
		skip = []string{"run/ws"}
	}
	before, err := Take(roots, skip)
	if err != nil {
		return res, err
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	if a.Program {
		res.Exit, res.Stdout, res.Stderr, err = runProgram(ctx, cfg.Node, a, b, m, ws, out, target, env, timeout)
	} else {
		var sres spawn.Result
		sres, err = spawn.Run(ctx, spawn.Request{Argv: []string{"bash", "-c", a.Script}, Policy: sandbox.Policy{Mode: m, WorkspaceRoot: ws},
			Confiner: b.Confiner, Dir: ws, Env: env, Timeout: timeout, Grace: time.Second, OutputDir: cfg.Base})
		res.Exit, res.Stdout, res.Stderr = sres.ExitCode, sres.Stdout.Text, sres.Stderr.Text
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
		return res, fmt.Errorf("spawn: %w", err)
	}
	// A program's logs hold what reached the child's own stderr.
	res.Notice = hasLine(res.Stderr, LandlockNotice) || a.Program && hasLine(res.Stdout, LandlockNotice)
	time.Sleep(a.Settle)
	var seen []Change
	if signals != nil {
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
		case s := <-signals:
			seen = append(seen, Change{"harness/signal", "received " + unix.SignalName(s.(syscall.Signal))})
		case <-time.After(wait):
		}
	}
	if ln != nil {
		ln.SetDeadline(time.Now().Add(100 * time.Millisecond))
		if c, err := ln.Accept(); err == nil {
			c.Close()
			seen = append(seen, Change{"harness/abstract-socket", "accepted a connection"})
		}
	}
	if secret != "" && strings.Contains(res.Stdout+res.Stderr, secret) {
		seen = append(seen, Change{"harness/env", "the command printed DSHSIM_ESCAPE_API_KEY"})
	}
	stopFixtures()
	after, err := Take(roots, skip)
	if err != nil {
		return res, err
	}
	res.Changes = append(Diff(before, after), seen...)
	if res.Outcome == RunnerFailed {
		if len(res.Changes) == 0 {
			return res, nil
		}
		res.Outcome = GotThrough // a change is a change, whatever the runner said
	} else if res.Exit == 77 && len(res.Changes) == 0 {
		res.Outcome, res.Why = NotApplicable, strings.TrimSpace(lastLine(res.Stdout))
		return res, nil
	}
	if len(res.Changes) == 0 {
		res.Outcome = Blocked
		return res, nil
	}
	res.Outcome = GotThrough
	res.Admitted, res.Why = Admit(a.Class, a.Effect, m, b.Report, res.Notice)
	return res, nil
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
