package escape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox"
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
	// UID and GID; Switch says whether to switch credentials (we are root and
	// UID is someone else).
	UID, GID int
	Switch   bool
}

// Identities returns root and an unprivileged user (uid/gid 65534) when the
// harness runs as root, else just the current user.
func Identities() []Identity {
	if os.Geteuid() == 0 {
		return []Identity{{Name: "root"}, {Name: "user", UID: 65534, GID: 65534, Switch: true}}
	}
	return []Identity{{Name: "user", UID: os.Geteuid(), GID: os.Getegid()}}
}

// Config is what a corpus run needs.
type Config struct {
	// Base is a scratch directory outside /tmp (bwrap hides /tmp, Landlock
	// grants all of it), e.g. from MkBase.
	Base string
	// Probe is the path of a built escape-probe, executable by every identity.
	Probe string
	// Classify says whether a run's stderr proves the runner failed; it is
	// sandbox.ClassifyRunnerFailure when nil.
	Classify func(exitCode int, signaled bool, stderr string, rules []sandbox.RunnerFailureRule) (string, bool)
	// Timeout bounds one attempt (default 30s).
	Timeout time.Duration
	// Node runs the run_code program attempts; nil makes them n/a.
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

// MkBase makes a scratch base directory under /var/tmp (world-traversable, so
// the unprivileged identity can reach its own subdirectories).
func MkBase() (string, error) {
	d, err := os.MkdirTemp("/var/tmp", "dshsim-escape-")
	if err != nil {
		return "", err
	}
	return d, os.Chmod(d, 0o755)
}

var seq atomic.Int64

// RunOne runs attempt a under backend b as identity id in mode m, in a fresh
// run directory, and checks the host side afterwards.
func RunOne(ctx context.Context, cfg Config, a Attempt, b Backend, id Identity, m sandbox.Mode) (Result, error) {
	res := Result{Attempt: a.Name, Backend: b.Name, Identity: id.Name, Mode: m}
	if a.Need(NeedRoot) && id.Name != "root" {
		res.Outcome, res.Why = NotApplicable, "needs root"
		return res, nil
	}
	n := seq.Add(1)
	parent := cfg.Base
	if a.Need(NeedTmpWorkspace) {
		parent = "/tmp"
	}
	run := filepath.Join(parent, fmt.Sprintf("%s-run%d", filepath.Base(cfg.Base), n))
	if parent == cfg.Base {
		run = filepath.Join(cfg.Base, fmt.Sprintf("run%d", n))
	}
	defer os.RemoveAll(run)
	ws, out := filepath.Join(run, "ws"), filepath.Join(run, "out")
	target := filepath.Join(out, "target")
	if err := layout(run, ws, out, target, id); err != nil {
		return res, err
	}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "HOME=" + ws,
		"WS=" + ws, "OUT=" + out, "TARGET=" + target, "PROBE=" + cfg.Probe}
	roots := map[string]string{"run": run}
	// teardown stops fixtures before the second snapshot; cleanup removes
	// what they made after it.
	var teardown, cleanup []func()
	defer func() {
		for i := len(teardown) - 1; i >= 0; i-- {
			teardown[i]()
		}
		for _, f := range cleanup {
			f()
		}
	}()
	var extra []*os.File
	if a.Need(NeedPrelink) {
		if err := os.Link(target, filepath.Join(ws, "prelinked")); err != nil {
			return res, err
		}
	}
	if a.Need(NeedShm) {
		shm := filepath.Join("/dev/shm", filepath.Base(run))
		if err := os.Mkdir(shm, 0o755); err != nil {
			return res, err
		}
		cleanup = append(cleanup, func() { os.RemoveAll(shm) })
		if err := os.Chown(shm, id.UID, id.GID); err != nil {
			return res, err
		}
		roots["shm"] = shm
		env = append(env, "SHM="+shm)
	}
	if a.Need(NeedCloexecFD) || a.Need(NeedLeakedFD) {
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0) // Go opens close-on-exec
		if err != nil {
			return res, err
		}
		teardown = append(teardown, func() { f.Close() })
		if a.Need(NeedLeakedFD) {
			extra = append(extra, f) // ExtraFiles are inherited (fd 3)
		}
	}
	if a.Need(NeedHolder) {
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return res, err
		}
		h := exec.Command("sleep", "60")
		h.ExtraFiles = []*os.File{f}
		h.SysProcAttr = creds(id)
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
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var exitCode *int
	var rules []sandbox.RunnerFailureRule
	programRunnerFailure := ""
	if a.Program {
		if cfg.Node == nil {
			res.Outcome, res.Why = NotApplicable, "needs node (run_code's runtime)"
			return res, nil
		}
		exit, so, se, rf, err := runProgram(cctx, cfg.Node, a, b, id, m, ws, out, target)
		if err != nil {
			return res, fmt.Errorf("run_code program: %w", err)
		}
		exitCode, res.Stdout, res.Stderr, programRunnerFailure = &exit, so, se, rf
		res.Exit = exit
	} else {
		ca, err := b.Confine(ctx, m, ws, []string{"bash", "-c", a.Script})
		if err != nil {
			return res, fmt.Errorf("confine: %w", err)
		}
		rules = ca.RunnerFailureRules
		cmd := exec.CommandContext(cctx, ca.Argv[0], ca.Argv[1:]...)
		cmd.Dir, cmd.Env, cmd.ExtraFiles, cmd.SysProcAttr = ws, env, extra, creds(id)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err = cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			z := 0
			exitCode = &z
		case errors.As(err, &ee):
			if ee.Exited() {
				c := ee.ExitCode()
				exitCode = &c
			}
		default:
			return res, fmt.Errorf("start %s: %w", ca.Argv[0], err)
		}
		if exitCode != nil {
			res.Exit = *exitCode
		} else {
			res.Exit = -1
		}
		res.Stdout, res.Stderr = so.String(), se.String()
	}
	res.Notice = hasLine(res.Stderr, LandlockNotice)
	time.Sleep(a.Settle)
	for i := len(teardown) - 1; i >= 0; i-- {
		teardown[i]()
	}
	teardown = nil
	after, err := Take(roots, skip)
	if err != nil {
		return res, err
	}
	res.Changes = Diff(before, after)
	classify := cfg.Classify
	if classify == nil {
		classify = sandbox.ClassifyRunnerFailure
	}
	{
		detail, failed := classify(res.Exit, exitCode == nil, res.Stderr, rules)
		if programRunnerFailure != "" {
			detail, failed = programRunnerFailure, true
		}
		if failed {
			res.Outcome, res.Why = RunnerFailed, detail
			if len(res.Changes) > 0 {
				res.Outcome = GotThrough // a change is a change, whatever the runner said
			} else {
				return res, nil
			}
		}
	}
	if res.Exit == 77 && len(res.Changes) == 0 {
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

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func creds(id Identity) *syscall.SysProcAttr {
	if !id.Switch {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID)}}
}

// fixedTime is the mtime every seeded file gets, so an mtime change shows.
var fixedTime = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

func layout(run, ws, out, target string, id Identity) error {
	files := map[string]string{
		filepath.Join(ws, "inside.txt"):  "inside\n",
		filepath.Join(ws, "sub", "file"): "sub\n",
		target:                           "original\n",
		filepath.Join(out, "other"):      "other\n",
	}
	dirs := []string{run, ws, filepath.Join(ws, "sub"), out, filepath.Join(out, "empty-dir")}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			return err
		}
	}
	all := append(append([]string{}, dirs...), filepath.Join(ws, "inside.txt"), filepath.Join(ws, "sub", "file"), target, filepath.Join(out, "other"))
	for i := len(all) - 1; i >= 0; i-- {
		p := all[i]
		if err := os.Chown(p, id.UID, id.GID); err != nil {
			return err
		}
		if err := os.Chtimes(p, fixedTime, fixedTime); err != nil {
			return err
		}
	}
	return nil
}
