//go:build linux

package isolate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"io"
	"os"
	"os/exec"
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

// Environment of a child: the stage and the handler name, and the
// configuration the setup and run stages share.
const (
	envStage    = "DSHSIM_ISOLATE"
	envConfig   = "DSHSIM_ISOLATE_CONFIG"
	stageSetup  = "setup"
	stageRun    = "run"
	stageServe  = "serve"
	responseFD  = 3
	connFD      = 4
	exe         = "/proc/self/exe"
	maxResponse = 1 << 30 // what PID 1 reads of the serve stage's answer (the host bounds its own read by Options.MaxResponse)
)

// DefaultMaxResponse bounds a child's answer when [Options.MaxResponse] is 0.
const DefaultMaxResponse = 256 << 20

// envelopeSlack is what a child's envelope holds besides its response:
// the JSON keys, an error and what it could see of the host (a few hundred
// bytes), bounded generously.
const envelopeSlack = 64 << 10

// envelopeBound is how much of the child's envelope the host reads for a
// response of at most limit bytes: the response base64-encoded (4 bytes
// for every 3 begun) and [envelopeSlack]. Pure.
func envelopeBound(limit int64) int64 { return 4*((limit+2)/3) + envelopeSlack }

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

// envelope is the child's answer on descriptor 3: the run stage's to PID 1,
// PID 1's to the host (with what the child could see).
type envelope struct {
	Response []byte       `json:"response,omitempty"`
	Error    string       `json:"error,omitempty"`
	Seen     *Containment `json:"seen,omitempty"`
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
			// (runAttr), which needs CAP_SETUID outside any user namespace.
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
	// Share lists host paths the child needs at the same path (a recording,
	// a Landlock runner, a test's temporary directory): each is bound
	// read-only into the child's root at its own path (its symlinks
	// resolved). A path under a system directory the root holds anyway
	// (/usr...) is left alone; one in /etc, /dev or /proc, or / or /tmp
	// itself, is an error.
	Share []string
	// TmpSize bounds the private /tmp in bytes (0: [DefaultTmpSize]).
	TmpSize int64
	// MaxResponse bounds the child's response in bytes (0:
	// [DefaultMaxResponse]); a longer one is an error. The envelope that
	// carries it on descriptor 3 (base64, about 4/3 of the response, and a
	// small rest) is read no further than one byte past its own bound.
	MaxResponse int64
	// HostNetwork keeps the host's network namespace; everything else of
	// the containment stays.
	HostNetwork bool
	// Env names environment variables the child inherits besides
	// [ChildEnv]'s own (none whose name counts as a secret, whatever this
	// says); Unset names variables it never inherits, even among those (a
	// secret whose name does not say so, such as dsh-record's key under a
	// name of the user's choosing).
	Env, Unset []string
	// Bounds are the run's resource bounds (zero fields: [DefaultBounds]).
	Bounds Bounds
	// Conn, when set, is passed to the handler (see [Conn]): one end of a
	// socket pair its caller talks to the handler over. Run closes its
	// copy once the child started.
	Conn *os.File
	// Seen, when set, receives what the child could see of the host.
	Seen *Containment
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

// sharePaths returns the absolute, symlink-free spellings of the paths to
// bind into the child's root (deduplicated, parents before children; those
// in a system directory the root holds anyway left out).
func sharePaths(paths []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if abs, err = filepath.EvalSymlinks(abs); err != nil {
			return nil, fmt.Errorf("isolate: share %s: %w", p, err)
		}
		bind, err := shareTarget(abs)
		if err != nil {
			return nil, err
		}
		if bind && !seen[abs] {
			seen[abs] = true
			out = append(out, abs)
		}
	}
	sort.Strings(out)
	return out, nil
}

// othersMayRead fails unless p may be read by others (searched too, a
// directory) or belongs to nobody: root's run runs as nobody, with no
// privilege over root's files.
func othersMayRead(p string) error {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return fmt.Errorf("isolate: share %s: %w", p, err)
	}
	need := uint32(0o004)
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		need = 0o005
	}
	if st.Uid != nobody && st.Mode&need != need {
		return fmt.Errorf("isolate: share %s: mode %04o, owner %d: run by root, the child runs as uid %d, which may not read it (make it readable by others)", p, st.Mode&0o7777, st.Uid, nobody)
	}
	return nil
}

// newConfig is the configuration of a child run with opt.
func newConfig(opt Options) (config, error) {
	share, err := sharePaths(opt.Share)
	if err != nil {
		return config{}, err
	}
	cfg := config{Share: share, TmpSize: opt.TmpSize, Bounds: opt.Bounds.withDefaults(), UID: os.Getuid(), GID: os.Getgid(), Conn: opt.Conn != nil}
	if cfg.TmpSize == 0 {
		cfg.TmpSize = DefaultTmpSize
	}
	if cfg.TmpSize < 0 {
		return config{}, fmt.Errorf("isolate: a /tmp of %d bytes", cfg.TmpSize)
	}
	if err := cfg.Bounds.Check(); err != nil {
		return config{}, fmt.Errorf("isolate: %w", err)
	}
	if cfg.UID == 0 {
		for _, p := range share {
			if err := othersMayRead(p); err != nil {
				return config{}, err
			}
		}
	}
	var st unix.Stat_t
	if err := unix.Stat("/tmp", &st); err != nil {
		return config{}, fmt.Errorf("isolate: stat the host's /tmp: %w", err)
	}
	cfg.HostTmp = strconv.FormatUint(st.Dev, 10)
	if !opt.HostNetwork {
		if cfg.HostNet, err = netNS(); err != nil {
			return config{}, fmt.Errorf("isolate: the host's network namespace: %w", err)
		}
	}
	return cfg, nil
}

func start(ctx context.Context, m mode, name string, request []byte, opt Options) ([]byte, error) {
	cfg, err := newConfig(opt)
	if err != nil {
		return nil, err
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	attr := m.attr()
	attr.Setsid = true // no controlling terminal: nothing of the run reaches the user's
	if cfg.HostNet != "" {
		attr.Cloneflags |= unix.CLONE_NEWNET
	}
	named, done, err := inCgroup(attr, cfg.Bounds)
	if err != nil {
		return nil, err
	}
	defer done()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = []string{os.Args[0]}
	cmd.Env = ChildEnv(os.Environ(), opt.Env)
	for _, k := range opt.Unset {
		cmd.Env = unsetEnv(cmd.Env, k)
	}
	cmd.Env = setEnv(setEnv(cmd.Env, envStage, stageSetup+":"+name), envConfig, string(cfgJSON))
	cmd.Stdin = bytes.NewReader(request)
	cmd.Stdout, cmd.Stderr = opt.Stderr, opt.Stderr
	cmd.ExtraFiles = []*os.File{w}
	if opt.Conn != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, opt.Conn)
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = Grace
	// PDEATHSIG fires when the thread that started the child ends, not the
	// process: held on this goroutine until the child is reaped, that thread
	// cannot end under it (a goroutine that locks a thread and returns ends
	// it, as the in-process Landlock path does).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// inproc.WhileDumpable: a process the in-process sandbox made not
	// dumpable cannot write its child's uid_map (EACCES as a normal user).
	// spawn.Keep: the child is in a session of its own, which a sweep of
	// spawn's subreaper in this process would take for a call's orphan.
	release, err := spawn.Keep(func() (int, error) {
		if err := inproc.WhileDumpable(cmd.Start); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	defer release()
	w.Close()
	if opt.Conn != nil {
		opt.Conn.Close()
	}
	if err != nil {
		return nil, err
	}
	limit := opt.MaxResponse
	if limit <= 0 {
		limit = DefaultMaxResponse
	}
	tooLong := fmt.Errorf("isolate: the child for %q answered more than %d bytes, the bound of its response", name, limit)
	envLimit := envelopeBound(limit)
	out, rerr := io.ReadAll(io.LimitReader(r, envLimit+1))
	if int64(len(out)) > envLimit {
		r.Close() // the child's further writes fail: it cannot block on us
		cmd.Wait()
		return nil, tooLong
	}
	werr := cmd.Wait()
	var env envelope
	if len(out) == 0 || json.Unmarshal(out, &env) != nil {
		if werr == nil {
			werr = rerr
		}
		return nil, named(fmt.Errorf("isolate: the child for %q ended without a response (%v)", name, werr))
	}
	if int64(len(env.Response)) > limit {
		return nil, tooLong
	}
	if opt.Seen != nil && env.Seen != nil {
		*opt.Seen = *env.Seen
	}
	if env.Error != "" {
		return nil, named(errors.New(env.Error))
	}
	return env.Response, nil
}
