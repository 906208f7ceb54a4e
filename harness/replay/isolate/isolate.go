//go:build linux

package isolate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Environment of a child: the stage and the handler name, the device of
// the host's /tmp and the host's network namespace (the child refuses to
// run on either), the shared paths and the size of the private /tmp.
const (
	envStage   = "DSHSIM_ISOLATE"
	envHostTmp = "DSHSIM_ISOLATE_HOSTTMP"
	envHostNet = "DSHSIM_ISOLATE_HOSTNET"
	envShare   = "DSHSIM_ISOLATE_SHARE"
	envTmpSize = "DSHSIM_ISOLATE_TMPSIZE"
	stageSetup = "setup"
	stageRun   = "run"
	responseFD = 3
	exe        = "/proc/self/exe"
)

// DefaultMaxResponse bounds a child's answer when [Options.MaxResponse] is 0.
const DefaultMaxResponse = 256 << 20

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
		code, err := setup(name)
		if err != nil {
			respond(nil, err)
			return 3
		}
		return code
	case stageRun:
		resp, err := serve(h)
		respond(resp, err)
		return 0
	}
	respond(nil, fmt.Errorf("isolate: unknown stage %q", stage))
	return 3
}

// setup is PID 1 of the child's namespaces: it contains them (contain),
// then starts the run stage and waits for it (runInit), and returns its exit
// status; an error means the run stage never started. It runs on one locked
// thread: capabilities are per thread.
func setup(name string) (int, error) {
	runtime.LockOSThread()
	var share []string
	if v := os.Getenv(envShare); v != "" {
		if err := json.Unmarshal([]byte(v), &share); err != nil {
			return 0, fmt.Errorf("isolate: %s: %w", envShare, err)
		}
	}
	size, err := strconv.ParseInt(os.Getenv(envTmpSize), 10, 64)
	if err != nil || size <= 0 {
		return 0, fmt.Errorf("isolate: %s=%q: want a positive number of bytes", envTmpSize, os.Getenv(envTmpSize))
	}
	if err := contain(share, size, os.Getenv(envHostNet) != ""); err != nil {
		return 0, err
	}
	return runInit(name)
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

// serve is the run stage: check the containment, then run the handler on
// stdin.
func serve(h Handler) ([]byte, error) {
	hostTmp, hostNet := os.Getenv(envHostTmp), os.Getenv(envHostNet)
	for _, k := range []string{envStage, envHostTmp, envHostNet, envShare, envTmpSize} {
		os.Unsetenv(k)
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	if err := checkContained(hostTmp, hostNet); err != nil {
		return nil, err
	}
	os.Setenv("TMPDIR", "/tmp")
	req, err := io.ReadAll(os.Stdin)
	if err != nil {
		return nil, fmt.Errorf("isolate: read the request: %w", err)
	}
	// PID 1 forwards SIGTERM and SIGINT here; they cancel the handler.
	ctx, stop := signal.NotifyContext(context.Background(), unix.SIGTERM, unix.SIGINT)
	defer stop()
	return h(ctx, req)
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
	privileged mode = iota + 1 // CAP_SYS_ADMIN: mount, PID and network namespaces
	userns                     // a user namespace mapping the own uid and gid first
)

func (m mode) String() string {
	if m == privileged {
		return "new mount, PID and network namespaces"
	}
	return "new user, mount, PID and network namespaces (own uid and gid mapped, CAP_SYS_ADMIN and CAP_NET_ADMIN ambient until the namespaces are set up)"
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
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
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
	Fatalf(format string, args ...any)
}

// Require skips the calling test when [Run] cannot start isolated children
// here, naming the capability that is missing: the one check of every test
// that runs work isolated. A child that started but found itself not
// contained is a defect, never a missing capability: the test fails.
func Require(t Skipper) {
	t.Helper()
	err := Available()
	switch {
	case err == nil:
	case strings.Contains(err.Error(), notContained):
		t.Fatalf("the isolated child is broken: %v", err)
	default:
		t.Skipf("needs user namespaces (or CAP_SYS_ADMIN) for a contained child: %v", err)
	}
}

// EnvUnavailable, when set, makes [Available] fail with its value as the
// reason, as on a host without user namespaces: what dsh-replay does there
// can be tried anywhere. It can only take isolation away, never grant it.
const EnvUnavailable = "DSHSIM_ISOLATE_UNAVAILABLE"

func chosenMode() (mode, error) {
	probeOnce.Do(func() {
		if why := os.Getenv(EnvUnavailable); why != "" {
			probeErr = fmt.Errorf("isolate: cannot contain a child here (%s=%s)", EnvUnavailable, why)
			return
		}
		modes := []mode{userns}
		switch {
		case os.Getuid() == 0 && hasSysAdmin():
			// Root only ever runs as the host's nobody in the run stage
			// (runMaps), which needs CAP_SETUID outside any user namespace.
			modes = []mode{privileged}
		case os.Getuid() == 0:
			probeErr = errors.New("isolate: cannot contain a child here (root without CAP_SYS_ADMIN: its replay would run as the host's uid 0 in a user namespace, which may write the kernel's settings through /proc)")
			return
		case hasSysAdmin():
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
		probeErr = fmt.Errorf("isolate: cannot contain a child here (%s)%s", strings.Join(errs, "; "), hint(errs))
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
	// Other paths are visible anyway (read-only) and are left alone.
	Share []string
	// TmpSize bounds the private /tmp in bytes (0: [DefaultTmpSize]).
	TmpSize int64
	// MaxResponse bounds the child's answer on descriptor 3 (its response
	// wrapped in a JSON envelope, base64: about 4/3 of the response) in
	// bytes (0: [DefaultMaxResponse]); a longer answer is an error, read no
	// further than one byte past the bound.
	MaxResponse int64
	// HostNetwork keeps the host's network namespace, for a child that
	// must reach a server (dsh-record's live model); everything else of the
	// containment stays.
	HostNetwork bool
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
	attr := m.attr()
	hostNet := "" // the child keeps the host's network namespace
	if !opt.HostNetwork {
		attr.Cloneflags |= unix.CLONE_NEWNET
		if hostNet, err = netNS(); err != nil {
			return nil, fmt.Errorf("isolate: the host's network namespace: %w", err)
		}
	}
	size := opt.TmpSize
	if size == 0 {
		size = DefaultTmpSize
	}
	if size < 0 {
		return nil, fmt.Errorf("isolate: a /tmp of %d bytes", size)
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
	cmd.Env = setEnv(cmd.Env, envHostNet, hostNet)
	cmd.Env = setEnv(cmd.Env, envTmpSize, strconv.FormatInt(size, 10))
	for _, name := range opt.Unset {
		cmd.Env = unsetEnv(cmd.Env, name)
	}
	cmd.Stdin = bytes.NewReader(request)
	cmd.Stdout, cmd.Stderr = opt.Stderr, opt.Stderr
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = Grace
	// PDEATHSIG fires when the thread that started the child ends, not the
	// process: held on this goroutine until the child is reaped, that thread
	// cannot end under it (a goroutine that locks a thread and returns ends
	// it, as the in-process Landlock path does).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, err
	}
	limit := opt.MaxResponse
	if limit <= 0 {
		limit = DefaultMaxResponse
	}
	out, rerr := io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(out)) > limit {
		r.Close() // the child's further writes fail: it cannot block on us
		cmd.Wait()
		return nil, fmt.Errorf("isolate: the child for %q answered more than %d bytes, the bound of its response", name, limit)
	}
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
