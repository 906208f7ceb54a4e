//go:build linux

package isolate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Environment of a child: the stage and the handler name, and the device of
// the host's /tmp (the child refuses to run on it).
const (
	envStage   = "DSHSIM_ISOLATE"
	envHostTmp = "DSHSIM_ISOLATE_HOSTTMP"
	envShare   = "DSHSIM_ISOLATE_SHARE"
	stageSetup = "setup"
	stageRun   = "run"
	responseFD = 3
	exe        = "/proc/self/exe"
)

// Grace is how long a cancelled child has between SIGTERM and SIGKILL.
const Grace = 10 * time.Second

// Handler is a function run in the isolated child: request is what [Run] was
// given; the response (or the error's text) goes back to Run's caller. ctx is
// cancelled when Run's context is.
type Handler func(ctx context.Context, request []byte) ([]byte, error)

var (
	mu       sync.Mutex
	handlers = map[string]Handler{}
)

// Serve registers h under name. When this process is the child [Run] started
// for name, Serve does not return: it sets the child up, runs h and exits.
// Call it from an init function; a name may be registered once.
func Serve(name string, h Handler) {
	if name == "" || strings.Contains(name, ":") || h == nil {
		panic("isolate: Serve needs a non-empty name without ':' and a handler")
	}
	mu.Lock()
	if _, dup := handlers[name]; dup {
		mu.Unlock()
		panic("isolate: handler " + strconv.Quote(name) + " registered twice")
	}
	handlers[name] = h
	mu.Unlock()
	stage, n, ok := strings.Cut(os.Getenv(envStage), ":")
	if !ok || n != name {
		return
	}
	os.Exit(child(stage, name, h))
}

// envelope is the child's answer on descriptor 3.
type envelope struct {
	Response []byte `json:"response,omitempty"`
	Error    string `json:"error,omitempty"`
}

func respond(resp []byte, err error) {
	f := os.NewFile(responseFD, "isolate-response")
	if f == nil {
		return
	}
	env := envelope{Response: resp}
	if err != nil {
		env.Error = err.Error()
	}
	_ = json.NewEncoder(f).Encode(env)
	_ = f.Close()
}

func child(stage, name string, h Handler) int {
	switch stage {
	case stageSetup:
		if err := setup(name); err != nil {
			respond(nil, err)
		}
		return 3 // setup only returns on failure (it execs the run stage)
	case stageRun:
		resp, err := serve(h)
		respond(resp, err)
		return 0
	}
	respond(nil, fmt.Errorf("isolate: unknown stage %q", stage))
	return 3
}

// setup makes mounts private, mounts the tmpfs on /tmp and the PID
// namespace's own /proc, brings the shared
// paths back read-only, drops the capabilities it was given for that, and
// re-executes the binary for the run stage (all on one locked thread:
// capabilities are per thread, and execve takes the calling thread's).
func setup(name string) error {
	runtime.LockOSThread()
	var share []string
	if v := os.Getenv(envShare); v != "" {
		if err := json.Unmarshal([]byte(v), &share); err != nil {
			return fmt.Errorf("isolate: %s: %w", envShare, err)
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("isolate: make the child's mounts private: %w", err)
	}
	// Open what must stay visible before the tmpfs hides it.
	held := make([]*os.File, len(share))
	for i, p := range share {
		f, err := os.OpenFile(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("isolate: share %s: %w", p, err)
		}
		defer f.Close()
		held[i] = f
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("isolate: mount a tmpfs on the child's /tmp: %w", err)
	}
	for i, p := range share {
		if err := bindReadOnly(held[i], p); err != nil {
			return fmt.Errorf("isolate: share %s: %w", p, err)
		}
	}
	// The child is in a PID namespace of its own: without a /proc of that
	// namespace, pids read from /proc name the host's processes, and a bwrap
	// started here (its --unshare-pid child, /proc/<pid>/ns/...) opens the
	// wrong process's namespaces or none at all.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("isolate: mount the child's PID namespace's /proc: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("isolate: drop the capabilities of the setup stage: %w", err)
	}
	env := setEnv(os.Environ(), envStage, stageRun+":"+name)
	if err := unix.Exec(exe, os.Args, env); err != nil {
		return fmt.Errorf("isolate: re-execute %s for the run stage: %w", exe, err)
	}
	return nil
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
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount: %w", err)
	}
	if err := unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("make the bind mount read-only: %w", err)
	}
	return nil
}

// dropCapabilities clears the ambient set and the inheritable, permitted and
// effective sets of the calling thread. Root regains its capabilities at the
// next execve, as root always does; anyone else has none afterwards.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear the ambient set: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// serve is the run stage: check /tmp, then run the handler on stdin.
func serve(h Handler) ([]byte, error) {
	host := os.Getenv(envHostTmp)
	for _, k := range []string{envStage, envHostTmp, envShare} {
		os.Unsetenv(k)
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	if err := checkPrivateTmp(host); err != nil {
		return nil, err
	}
	os.Setenv("TMPDIR", "/tmp")
	req, err := io.ReadAll(os.Stdin)
	if err != nil {
		return nil, fmt.Errorf("isolate: read the request: %w", err)
	}
	// PID 1 of a namespace gets only the signals it handles.
	ctx, stop := signal.NotifyContext(context.Background(), unix.SIGTERM, unix.SIGINT)
	defer stop()
	return h(ctx, req)
}

// checkPrivateTmp refuses to run on the host's /tmp: /tmp must be a tmpfs on
// another device than host (the parent's /tmp device, decimal).
func checkPrivateTmp(host string) error {
	var fs unix.Statfs_t
	if err := unix.Statfs("/tmp", &fs); err != nil {
		return fmt.Errorf("isolate: statfs /tmp: %w", err)
	}
	if fs.Type != unix.TMPFS_MAGIC {
		return fmt.Errorf("isolate: the child's /tmp is not a tmpfs (type %#x)", fs.Type)
	}
	var st unix.Stat_t
	if err := unix.Stat("/tmp", &st); err != nil {
		return fmt.Errorf("isolate: stat /tmp: %w", err)
	}
	if strconv.FormatUint(st.Dev, 10) == host {
		return errors.New("isolate: the child's /tmp is the host's /tmp")
	}
	return nil
}

func unsetEnv(env []string, key string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func setEnv(env []string, key, value string) []string {
	return append(unsetEnv(env, key), key+"="+value)
}

// mode is how children get their namespaces here.
type mode int

const (
	privileged mode = iota + 1 // CAP_SYS_ADMIN: mount and PID namespaces
	userns                     // a user namespace mapping the own uid and gid first
)

func (m mode) String() string {
	if m == privileged {
		return "new mount and PID namespaces"
	}
	return "new user, mount and PID namespaces (own uid and gid mapped, CAP_SYS_ADMIN ambient until /tmp is mounted)"
}

// extraCloneFlags is added to every child's clone flags (tests make clone fail with it).
var extraCloneFlags uintptr

func (m mode) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWPID | extraCloneFlags, Pdeathsig: syscall.SIGKILL}
	if m == userns {
		uid, gid := os.Getuid(), os.Getgid()
		a.Cloneflags |= unix.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	return a
}

// hasSysAdmin reports whether the process holds CAP_SYS_ADMIN (effective).
func hasSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

var (
	probeOnce sync.Once
	probed    mode
	probeErr  error
)

// Available reports whether [Run] can start isolated children here. It probes
// once per process (a short child run); the error says why not.
func Available() error {
	_, err := chosenMode()
	return err
}

// Skipper is the part of a testing.TB that [Require] uses.
type Skipper interface {
	Helper()
	Skipf(format string, args ...any)
}

// Require skips the calling test when [Run] cannot start isolated children
// here, naming the capability that is missing: the one check of every test
// that runs work isolated.
func Require(t Skipper) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("needs user namespaces (or CAP_SYS_ADMIN) for a private /tmp: %v", err)
	}
}

func chosenMode() (mode, error) {
	probeOnce.Do(func() {
		modes := []mode{userns}
		if hasSysAdmin() {
			modes = []mode{privileged, userns}
		}
		var errs []string
		for _, m := range modes {
			if _, err := start(context.Background(), m, probeName, nil, Options{Stderr: io.Discard}); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", m, err))
				continue
			}
			probed = m
			return
		}
		probeErr = fmt.Errorf("isolate: cannot give a child a private /tmp here (%s)%s", strings.Join(errs, "; "), hint(errs))
	})
	return probed, probeErr
}

func hint(errs []string) string {
	for _, e := range errs {
		if strings.Contains(e, "operation not permitted") || strings.Contains(e, "no space left") || strings.Contains(e, "invalid argument") {
			return ": user namespaces look disabled or restricted (see /proc/sys/user/max_user_namespaces, " +
				"kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns), or a seccomp profile refuses them"
		}
	}
	return ""
}

// Options are the optional parts of a run.
type Options struct {
	// Stderr receives the child's stdout and stderr (nil: os.Stderr).
	Stderr io.Writer
	// Share lists host paths under /tmp that the child needs at the same
	// path (a recording copied into a test's temporary directory, a runner
	// built there): each is bind-mounted read-only into the private /tmp.
	// Other paths are visible anyway and are left alone.
	Share []string
	// Unset names environment variables the child does not inherit (a
	// secret the request carries instead: a child's initial environment is
	// readable by every process of its user in its PID namespace).
	Unset []string
}

// Run starts the child registered as name (see [Serve]) with request on its
// stdin, waits for it and returns its response. Cancelling ctx sends the
// child SIGTERM and, after [Grace], SIGKILL.
func Run(ctx context.Context, name string, request []byte, opt Options) ([]byte, error) {
	mu.Lock()
	_, ok := handlers[name]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("isolate: no handler %q is registered in this binary", name)
	}
	m, err := chosenMode()
	if err != nil {
		return nil, err
	}
	if opt.Stderr == nil {
		opt.Stderr = os.Stderr
	}
	return start(ctx, m, name, request, opt)
}

// underTmp returns the absolute, symlink-free spellings of the paths that lie
// under /tmp (deduplicated, parents before children).
func underTmp(paths []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		} else {
			return nil, fmt.Errorf("isolate: share %s: %w", p, err)
		}
		if (abs == "/tmp" || strings.HasPrefix(abs, "/tmp/")) && !seen[abs] {
			if abs == "/tmp" {
				return nil, errors.New("isolate: cannot share /tmp itself")
			}
			seen[abs] = true
			out = append(out, abs)
		}
	}
	sort.Strings(out)
	return out, nil
}

func start(ctx context.Context, m mode, name string, request []byte, opt Options) ([]byte, error) {
	share, err := underTmp(opt.Share)
	if err != nil {
		return nil, err
	}
	shareJSON, _ := json.Marshal(share)
	var st unix.Stat_t
	if err := unix.Stat("/tmp", &st); err != nil {
		return nil, fmt.Errorf("isolate: stat the host's /tmp: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = []string{os.Args[0]}
	cmd.Env = setEnv(setEnv(os.Environ(), envStage, stageSetup+":"+name), envHostTmp, strconv.FormatUint(st.Dev, 10))
	cmd.Env = setEnv(cmd.Env, envShare, string(shareJSON))
	for _, name := range opt.Unset {
		cmd.Env = unsetEnv(cmd.Env, name)
	}
	cmd.Stdin = bytes.NewReader(request)
	cmd.Stdout, cmd.Stderr = opt.Stderr, opt.Stderr
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = m.attr()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = Grace
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, err
	}
	out, rerr := io.ReadAll(r)
	werr := cmd.Wait()
	var env envelope
	if len(out) == 0 || json.Unmarshal(out, &env) != nil {
		if werr == nil {
			werr = rerr
		}
		return nil, fmt.Errorf("isolate: the child for %q ended without a response (%v)", name, werr)
	}
	if env.Error != "" {
		return nil, errors.New(env.Error)
	}
	return env.Response, nil
}
