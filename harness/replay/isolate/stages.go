//go:build linux

package isolate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

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
		respond(nil, runStage(name))
		return 3
	case stageServe:
		resp, err := serve(h)
		respond(resp, err)
		return 0
	}
	respond(nil, fmt.Errorf("isolate: unknown stage %q", stage))
	return 3
}

// config is what the host tells the setup and run stages (envConfig).
type config struct {
	// Share are the host paths bound read-only at their own paths.
	Share []string `json:"share"`
	// TmpSize bounds the private /tmp in bytes.
	TmpSize int64 `json:"tmpSize"`
	// HostTmp is the device of the host's /tmp (decimal) and HostNet the
	// host's network namespace ("" when the child keeps it): the run stage
	// refuses to run on either.
	HostTmp string `json:"hostTmp"`
	HostNet string `json:"hostNet"`
	// Bounds are the run's resource bounds (defaults filled in).
	Bounds Bounds `json:"bounds"`
	// UID and GID are the caller's.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Conn: descriptor 4 is [Options.Conn].
	Conn bool `json:"conn,omitempty"`
}

// nobody is the host uid and gid root's run stage runs as.
const nobody = 65534

// runIDs are the uid and gid the run stage runs as, in its namespace and
// on the host alike: the caller's own, or nobody's for root (a process
// whose host uid is 0 passes procfs's uid checks in any namespace, and
// every file of root's would be its own).
func (c config) runIDs() (uid, gid int) {
	if c.UID == 0 {
		return nobody, nobody
	}
	return c.UID, c.GID
}

func readConfig() (config, error) {
	var c config
	if err := json.Unmarshal([]byte(os.Getenv(envConfig)), &c); err != nil {
		return c, fmt.Errorf("isolate: %s: %w", envConfig, err)
	}
	if c.TmpSize <= 0 {
		return c, fmt.Errorf("isolate: %s: a /tmp of %d bytes", envConfig, c.TmpSize)
	}
	return c, nil
}

// setup is PID 1 of the child's namespaces: it contains them (contain),
// then starts the run stage and waits for it (runInit), and returns its exit
// status; an error means the run stage never started. It runs on one locked
// thread: capabilities are per thread.
func setup(name string) (int, error) {
	runtime.LockOSThread()
	cfg, err := readConfig()
	if err != nil {
		return 0, err
	}
	seen, err := contain(cfg)
	if err != nil {
		return 0, err
	}
	seen.describeRun(cfg)
	return runInit(name, cfg, seen)
}

// securebits the run stage locks before its last exec (linux/securebits.h):
// root (uid 0, which it never is) would get no capabilities at an exec, a
// change of uid keeps or drops none, and no capability can become ambient.
const (
	secbitNoroot               = 1 << 0
	secbitNorootLocked         = 1 << 1
	secbitNoSetuidFixup        = 1 << 2
	secbitNoSetuidFixupLocked  = 1 << 3
	secbitKeepCapsLocked       = 1 << 5
	secbitNoCapAmbientRaise    = 1 << 6
	secbitNoCapAmbientRaiseLck = 1 << 7
	securebits                 = secbitNoroot | secbitNorootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLck
)

// runStage is the run stage's first program, in its own user and mount
// namespace with CAP_SETPCAP (ambient, from runInit) and nothing else: on
// one thread it sets the run's resource limits, empties the capability
// bounding set, locks the securebits, clears every capability set, sets
// no_new_privs, and then executes itself again as the serve stage. That
// exec is what makes the drop whole: capabilities are per thread, and the
// Go runtime's other threads (any of which may start a command) would keep
// theirs; an exec leaves one thread, this one. It returns only on failure.
func runStage(name string) error {
	runtime.LockOSThread()
	cfg, err := readConfig()
	if err != nil {
		return err
	}
	for _, l := range cfg.Bounds.rlimits() {
		var old unix.Rlimit
		if err := unix.Getrlimit(l.resource, &old); err != nil {
			return fmt.Errorf("isolate: read the run's resource limit %d: %w", l.resource, err)
		}
		l = l.within(old.Max)
		if err := unix.Setrlimit(l.resource, &unix.Rlimit{Cur: l.soft, Max: l.hard}); err != nil {
			return fmt.Errorf("isolate: set the run's resource limit %d to %d: %w", l.resource, l.soft, err)
		}
	}
	if err := dropEverything(); err != nil {
		return fmt.Errorf("isolate: drop the run stage's privileges: %w", err)
	}
	env := setEnv(os.Environ(), envStage, stageServe+":"+name)
	return fmt.Errorf("isolate: execute the serve stage: %w", syscall.Exec(exe, os.Args, env))
}

// dropEverything empties the calling thread's bounding set, locks the
// securebits, clears its ambient, inheritable, permitted and effective
// sets and sets no_new_privs.
func dropEverything() error {
	for c := 0; ; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		} else if err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, securebits, 0, 0, 0); err != nil {
		return fmt.Errorf("lock the securebits: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear the ambient set: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear the capability sets: %w", err)
	}
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}

// conn is the handler's [Options.Conn], nil when the run has none.
var conn *os.File

// Conn is the socket the caller of [Run] passed as [Options.Conn], in the
// handler of a run that has one; nil anywhere else.
func Conn() *os.File { return conn }

// serve is the serve stage: it makes itself undumpable and every
// descriptor it holds close-on-exec, checks the containment, then runs the
// handler on stdin.
func serve(h Handler) ([]byte, error) {
	cfg, err := readConfig()
	for _, k := range []string{envStage, envConfig} {
		os.Unsetenv(k)
	}
	if err != nil {
		return nil, err
	}
	// Undumpable first: from now on no process of the run, though it has
	// this uid, can trace this one, read or write its memory or open its
	// descriptors through /proc (that takes CAP_SYS_PTRACE, which nothing
	// here has).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("isolate: make the run stage undumpable: %w", err)
	}
	if err := closeOnExec(); err != nil {
		return nil, err
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	if err := checkContained(cfg); err != nil {
		return nil, err
	}
	if cfg.Conn {
		conn = os.NewFile(connFD, "isolate-conn")
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

// closeOnExec marks every descriptor of this process close-on-exec: the
// request (0), the response (3), the caller's socket (4) and its output
// (1, 2) are this stage's, never a command's (a command gets what its
// starter hands it, which sets that up itself).
func closeOnExec() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("isolate: list the run stage's descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("isolate: make descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}

// notContained begins every error of checkContained: a child that started
// and is not contained is a defect here, not a missing capability.
const notContained = "isolate: the child is not contained: "

// checkContained refuses to run the handler unless the child is contained:
// /tmp is a tmpfs on another device than the host's, / is read-only, the
// network namespace is not the host's (unless the host kept it), the
// process holds no capability and cannot gain one (every set empty, the
// bounding set too, no_new_privs set), is not dumpable, and, run by root,
// holds no supplementary group.
func checkContained(cfg config) error {
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
	if strconv.FormatUint(st.Dev, 10) == cfg.HostTmp {
		return errors.New(notContained + "its /tmp is the host's /tmp")
	}
	if err := unix.Statfs("/", &sfs); err != nil {
		return fmt.Errorf(notContained+"statfs /: %w", err)
	}
	if sfs.Flags&unix.ST_RDONLY == 0 {
		return errors.New(notContained + "its / is writable")
	}
	if err := checkPrivileges(cfg); err != nil {
		return err
	}
	if cfg.HostNet == "" {
		return nil
	}
	ns, err := netNS()
	if err != nil {
		return fmt.Errorf(notContained+"its network namespace: %w", err)
	}
	if ns == cfg.HostNet || !strings.HasPrefix(ns, "net:") {
		return fmt.Errorf(notContained+"it shares the host's network namespace (%s)", ns)
	}
	return nil
}

// checkPrivileges is checkContained's part about privileges.
func checkPrivileges(cfg config) error {
	status, err := procfs.Proc.Status("self")
	if err != nil {
		return fmt.Errorf(notContained+"read its status: %w", err)
	}
	fields := procfs.ParseStatus(status)
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if v := fields[k]; strings.Trim(v, "0") != "" || v == "" {
			return fmt.Errorf(notContained+"it holds capabilities (%s %q)", k, v)
		}
	}
	if fields["NoNewPrivs"] != "1" {
		return errors.New(notContained + "no_new_privs is not set")
	}
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		return fmt.Errorf(notContained+"it is dumpable (%d, %v)", d, err)
	}
	if cfg.UID == 0 {
		if groups, err := unix.Getgroups(); err != nil || len(groups) != 0 {
			return fmt.Errorf(notContained+"run by root, it holds supplementary groups %v (%v)", groups, err)
		}
	}
	return nil
}

// The setup and run stages need no handler: this package's own init runs
// them, before the packages that import it (the handlers' packages, and
// everything they import) initialize, which is most of a Go program's
// start. Only the serve stage becomes the child in [Serve].
func init() {
	stage, name, ok := strings.Cut(os.Getenv(envStage), ":")
	if ok && (stage == stageSetup || stage == stageRun) {
		os.Exit(child(stage, name, nil))
	}
}
