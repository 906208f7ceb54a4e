package spawn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/cgroup"
	"github.com/dshsim/dshsim/sandbox/internal/seal"
)

// DefaultGrace is the delay between SIGTERM and SIGKILL when a process group is killed.
const DefaultGrace = 2 * time.Second

// Confiner confines one command for one policy: the one way a confined mode
// reaches a process. *sandbox.Provider (wrapped argv) and *inproc.Launcher
// (a restricted thread starts the command) are the two kinds
// (*chain.Confiner, the stack's, returns one or the other); both check the call
// with sandbox.Validate, so a policy is validated once per run, there.
//
// The interface is closed to the sandbox tree: Sealed's parameter type is
// internal to it (package sandbox/internal/seal), so no other package can
// declare the method. A confiner made elsewhere (a test's) can only wrap one
// of ours, by embedding it. confiners_test.go checks the three at compile
// time.
type Confiner interface {
	Confine(ctx context.Context, argv []string, policy sandbox.Policy) (sandbox.ConfinedArgv, error)
	// Sealed does nothing; it closes the interface (see above).
	Sealed(seal.Token)
}

// Request is one execution.
type Request struct {
	// Argv is the command, usually {"bash", "-c", cmd}.
	Argv []string
	// Policy is this call's policy; danger-full-access bypasses Confiner.
	Policy sandbox.Policy
	// Confiner confines Argv for confined modes (required for them).
	Confiner Confiner
	// Detach unties the process from Start's ctx, which then only reaches
	// the Confiner (it bounds confinement, not the start or the life of the
	// process): for a command that may outlive the call that started it, as
	// a background job. Without Detach, Start refuses a ctx already done and
	// cancelling ctx kills the process group.
	Detach bool
	// Dir is the working directory; "" means Policy.WorkspaceRoot.
	Dir string
	// Env is the full environment; nil inherits the process environment.
	Env []string
	// Stdin is the standard input; nil is /dev/null.
	Stdin io.Reader
	// Terminal, when set, is a terminal (a pseudo-terminal's replica) that
	// is the command's standard input, output and error and the controlling
	// terminal of its new session (a persistent interactive shell): Stdin,
	// Stdout and Stderr are then unused and nothing is captured (the caller
	// reads the terminal's other side).
	Terminal *os.File
	// ExtraFiles are descriptors the command inherits as 3, 4, ...
	// (exec.Cmd.ExtraFiles); both runners pass them through to the command.
	// The close-on-exec marking of a confined start does not reach them.
	// The confinement's own (sandbox.ConfinedArgv.Files, which bwrap binds
	// and closes) follow them, one number later (sandbox.ConfinedArgv.Inherit).
	ExtraFiles []*os.File
	// Stdout and Stderr, when set, receive a copy of each stream as it
	// arrives, besides the capture.
	Stdout, Stderr io.Writer
	// Timeout, when positive, kills the process group when it expires
	// (Result.TimedOut). Leave it zero to keep a process running past a
	// foreground wait (wait on Done with your own timer instead).
	Timeout time.Duration
	// Grace is the SIGTERM to SIGKILL delay; 0 means DefaultGrace.
	Grace time.Duration
	// TailBytes is the per-stream in-memory tail; 0 means DefaultTailBytes.
	TailBytes int
	// OutputDir is where full-output files go; "" means os.TempDir().
	OutputDir string
}

// Result is a settled process.
type Result struct {
	// ExitCode is the exit status; -1 when Signaled.
	ExitCode int
	// Signaled reports death by a signal; Signal names it ("SIGTERM").
	Signaled bool
	Signal   string
	// TimedOut reports that Request.Timeout expired and the group was killed.
	TimedOut bool
	// Stdout and Stderr are the captured streams.
	Stdout, Stderr Stream
	// Sandbox is the report of a confined run (mode, backend, enforcement,
	// what it cannot govern, denial, runner failure); nil when the run was
	// not confined (danger-full-access).
	Sandbox *sandbox.Report
	// Argv is the argv actually spawned (the wrapped one when confined).
	Argv []string
	// Bound names the limit of the call's policy (sandbox.Limits) that
	// stopped it, "" when none did (sandbox.Limits.Bound).
	Bound string `json:",omitempty"`
}

// Process is a started execution.
type Process struct {
	cmd            *exec.Cmd
	wrapped        *sandbox.ConfinedArgv
	mode           sandbox.Mode
	grace          time.Duration
	stdout, stderr *capture
	done           chan struct{}
	killing
	mu        sync.Mutex
	result    Result
	err       error
	stopWatch func() bool
	limits    sandbox.Limits
	group     *cgroup.Group // the call's cgroup, nil when it is bounded by resource limits alone
}

// killing is a process's kill: requested once, its group reaped once.
type killing struct {
	killOnce sync.Once
	killed   atomic.Bool
	reaped   chan struct{} // closed once a killed group has no live member
	reapOnce sync.Once
	timedOut bool
}

// Keep starts a child of this process that other code waits for itself
// (start forks it and returns its pid) and keeps it from the sweeps of
// spawn's subreaper, which kill a child of this process in a session of its
// own that no call claims, as the orphan of a call it looks like. release
// ends that once its Wait returned. A process that starts such children
// beside spawn's calls (a contained replay's child, in a session of its
// own) starts them so.
func Keep(start func() (pid int, err error)) (release func(), err error) {
	return theReaper.keep(start)
}

// Start confines (unless danger-full-access) and starts req.Argv in its own
// session and process group (no controlling terminal). Errors: ctx already
// done (not with req.Detach); an empty argv; a confined mode without a
// Confiner; any Confine error, unchanged (including *sandbox.UnavailableError
// and bad input); a confined argv that is not the confiner's promised shape
// (<runner> [profile] -- <argv>, or argv as given when the confiner starts
// the command itself) or that grants another mode; descriptors that cannot
// be kept from a confined command; a workdir the bwrap profile hides
// ([sandbox.ConfinedArgv.HidesWorkdir]); a start failure attributed to the runner
// (sandbox.ConfinedArgv.StartError) as *sandbox.UnavailableError with detail
// "Error: spawn <runner> <CODE>"; any other start error unchanged. Nothing
// runs when Start fails. Before a confined start every descriptor of this
// process from 3 up is marked close-on-exec (process-wide: inherited
// descriptors reach no later child either). Cancelling ctx kills the process
// group (SIGTERM, then SIGKILL after the grace), unless req.Detach.
func Start(ctx context.Context, req Request) (*Process, error) {
	if err := ctx.Err(); err != nil && !req.Detach {
		return nil, err
	}
	if len(req.Argv) == 0 {
		return nil, errors.New("spawn: empty argv")
	}
	p := &Process{mode: req.Policy.Mode, grace: req.Grace, done: make(chan struct{}), killing: killing{reaped: make(chan struct{})}}
	if p.grace <= 0 {
		p.grace = DefaultGrace
	}
	dir := req.Dir
	if dir == "" {
		dir = req.Policy.WorkspaceRoot
	}
	argv := req.Argv
	start := (*exec.Cmd).Start
	p.limits = req.Policy.Limits
	if !p.limits.Zero() {
		g, rlimits, err := bounded(p.limits)
		if err != nil {
			return nil, err
		}
		p.group, req.Policy.Limits = g, rlimits
	}
	started := false
	defer func() {
		if !started && p.group != nil {
			p.group.Close()
		}
	}()
	if req.Policy.Mode != sandbox.DangerFullAccess {
		w, err := confine(ctx, req, dir)
		if err != nil {
			return nil, err
		}
		defer w.Close() // this process's copies of what Argv binds (bwrap's --bind-fd): the command inherits its own
		p.wrapped = &w
		argv, req.ExtraFiles = w.Inherit(req.ExtraFiles)
		if w.Start != nil {
			start = w.Start
		}
	}
	if !req.Policy.Limits.Zero() && (p.wrapped == nil || p.wrapped.Start == nil) {
		start = limited(req.Policy.Limits, p.wrapped != nil && p.wrapped.Backend == sandbox.BackendLandlock)
	}
	if err := theReaper.enable(); err != nil {
		return nil, err
	}
	cmd := p.command(req, argv, dir)
	if err := theReaper.launch(func() (int, error) {
		if err := p.launch(start, cmd, dir); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	}); err != nil {
		return nil, err
	}
	started = true
	p.watch(ctx, req)
	return p, nil
}

// command is the exec.Cmd that runs argv (req.Argv, or its confined form)
// in dir: in a session of its own, its streams captured (and copied to
// req.Stdout and req.Stderr), without the environment's secrets when the
// confinement scrubs them.
func (p *Process) command(req Request, argv []string, dir string) *exec.Cmd {
	tail := req.TailBytes
	if tail <= 0 {
		tail = DefaultTailBytes
	}
	outDir := req.OutputDir
	if outDir == "" {
		outDir = os.TempDir()
	}
	p.stdout, p.stderr = newCapture(tail, outDir, "stdout"), newCapture(tail, outDir, "stderr")
	env := req.Env
	if p.wrapped != nil && p.wrapped.ScrubSecrets {
		// The hardening: the command starts without the environment's secrets.
		if env == nil {
			env = os.Environ()
		}
		env = sandbox.ScrubSecrets(env)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, req.Stdin
	cmd.Stdout, cmd.Stderr = tee(p.stdout, req.Stdout), tee(p.stderr, req.Stderr)
	cmd.ExtraFiles = req.ExtraFiles
	// A new session, not only a process group (like Node's detached spawn):
	// with the caller's controlling terminal a confined command could type
	// into the user's shell with TIOCSTI, which then runs it unconfined.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if p.group != nil {
		// The command is created in the call's cgroup (clone3's
		// CLONE_INTO_CGROUP): it runs no instruction outside it.
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, p.group.FD()
	}
	if req.Terminal != nil {
		// The new session's controlling terminal is the caller's own
		// pseudo-terminal, never the caller's terminal.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = req.Terminal, req.Terminal, req.Terminal
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
	}
	// A daemonised grandchild holding the pipes must not hold Wait forever.
	cmd.WaitDelay = p.grace
	p.cmd = cmd
	p.result.Argv = append([]string(nil), argv...)
	return cmd
}

// launch starts cmd with start (exec's, or the confiner's own), the signals
// this process ignores at their default action in the command. A confined
// start first marks every inherited descriptor close-on-exec; a failure the
// confinement attributes to its runner is its *sandbox.UnavailableError,
// any other a *StartError.
func (p *Process) launch(start func(*exec.Cmd) error, cmd *exec.Cmd, dir string) error {
	resetIgnoredSignals()
	if p.wrapped != nil {
		// Neither bwrap nor Landlock governs a descriptor that is already
		// open: one this process inherited without close-on-exec (Go marks
		// only its own) would let the command write where it points.
		if err := closeOnExecAbove2(); err != nil {
			p.stdout.close()
			p.stderr.close()
			return err
		}
	}
	if err := start(cmd); err != nil {
		p.stdout.close()
		p.stderr.close()
		if p.wrapped != nil {
			var ue *sandbox.UnavailableError
			if cerr := p.wrapped.StartError(err, cmd.Path, dir); errors.As(cerr, &ue) {
				return cerr // the runner could not be started
			}
		}
		return &StartError{Program: p.result.Argv[0], Err: err}
	}
	return nil
}

// watch kills the started process's group when ctx is cancelled (unless
// req.Detach) or req.Timeout expires, and settles the result once it exits.
func (p *Process) watch(ctx context.Context, req Request) {
	p.stopWatch = func() bool { return false }
	if !req.Detach {
		p.stopWatch = context.AfterFunc(ctx, p.Kill)
	}
	var timer *time.Timer
	if req.Timeout > 0 {
		timer = time.AfterFunc(req.Timeout, func() {
			p.mu.Lock()
			p.timedOut = true
			p.mu.Unlock()
			p.Kill()
		})
	}
	go func() {
		pid := p.cmd.Process.Pid
		theReaper.exited(pid, p.wrapped != nil && p.wrapped.NoCapabilities) // what the call left ends before its result
		werr := p.cmd.Wait()
		theReaper.collected(pid)
		if timer != nil {
			timer.Stop()
		}
		p.stopWatch()
		p.stdout.close()
		p.stderr.close()
		p.settle(werr)
		if p.group != nil {
			p.group.Close() // what is left of the call is killed; a cgroup that cannot be removed stays empty
		}
		close(p.done)
	}()
}

// confine asks req.Confiner for the call and checks what it returned: the
// shape it promises, the mode asked for, and a workdir the profile does not
// hide.
func confine(ctx context.Context, req Request, dir string) (sandbox.ConfinedArgv, error) {
	if req.Confiner == nil {
		return sandbox.ConfinedArgv{}, errors.New("spawn: mode " + string(req.Policy.Mode) + " needs a Confiner")
	}
	w, err := req.Confiner.Confine(ctx, req.Argv, req.Policy)
	if err != nil {
		return sandbox.ConfinedArgv{}, err
	}
	if w.Start != nil && !slices.Equal(w.Argv, req.Argv) || w.Start == nil && !wraps(w.Argv, req.Argv) {
		w.Close()
		return sandbox.ConfinedArgv{}, fmt.Errorf("spawn: the %q confiner returned %q, which does not wrap the command as <runner> [profile] -- %q; refusing to run it", w.Backend, w.Argv, req.Argv)
	}
	if w.Policy.Mode != req.Policy.Mode {
		w.Close()
		return sandbox.ConfinedArgv{}, fmt.Errorf("spawn: the %q confiner granted mode %q to a %s call; refusing to run it", w.Backend, w.Policy.Mode, req.Policy.Mode)
	}
	if w.Start != nil && !req.Policy.Limits.Zero() && !w.SetsLimits {
		w.Close()
		return sandbox.ConfinedArgv{}, fmt.Errorf("spawn: the %q confiner starts the command itself and cannot set the call's limits; refusing to run it unbounded", w.Backend)
	}
	if w.HidesWorkdir(dir) {
		w.Close()
		return sandbox.ConfinedArgv{}, fmt.Errorf("spawn: workdir %q is under /tmp, which the %s profile covers with an empty tmpfs in %s mode (only the workspace %q is bound on top): the command would silently start in $HOME or / instead; refusing to run it", dir, w.Backend, req.Policy.Mode, w.Policy.WorkspaceRoot)
	}
	return w, nil
}

func tee(c *capture, w io.Writer) io.Writer {
	if w == nil {
		return c
	}
	return io.MultiWriter(c, w)
}

// wraps reports whether wrapped has the shape every confiner promises: a
// runner program, its profile, "--", then exactly argv. A passthrough (or any
// other shape) would run the command unconfined under confined facts.
func wraps(wrapped, argv []string) bool {
	n := len(wrapped) - len(argv) - 1 // index of "--"
	if n < 1 || wrapped[n] != "--" {
		return false
	}
	for i, a := range argv {
		if wrapped[n+1+i] != a {
			return false
		}
	}
	return true
}

// Run is Start then Wait.
func Run(ctx context.Context, req Request) (Result, error) {
	p, err := Start(ctx, req)
	if err != nil {
		return Result{}, err
	}
	return p.Wait()
}

func (p *Process) settle(werr error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &p.result
	r.TimedOut = p.timedOut
	r.Stdout, r.Stderr = p.stdout.snapshot(), p.stderr.snapshot()
	st := p.cmd.ProcessState
	if st == nil {
		// Wait failed without a status: report it as a start-level error.
		r.ExitCode, r.Signaled = -1, false
		p.err = werr
		return
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		r.ExitCode, r.Signaled, r.Signal = -1, true, unix.SignalName(ws.Signal())
	} else {
		r.ExitCode = ws.ExitStatus()
	}
	if p.wrapped != nil {
		r.Sandbox, p.err = p.wrapped.Classify(r.ExitCode, r.Signaled, r.Stderr.Text)
	}
	if p.group != nil {
		r.Bound = p.limits.GroupBound(p.group.Events(), r.Signal, r.ExitCode, r.Stderr.Text)
	} else {
		r.Bound = p.limits.Bound(r.Signal, (st.UserTime() + st.SystemTime()).Seconds(), r.ExitCode, r.Stderr.Text)
	}
	if r.Sandbox != nil {
		r.Sandbox.Bound = r.Bound
	}
}

// Pid is the process id (also the process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process settled and its output is complete.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait blocks until the process settled and returns its result. The error is
// nil for any exit (a non-zero exit is not an error), or a
// *sandbox.UnavailableError with the matched line as detail when the runner
// failed before running the command (the Result is still filled, with
// Sandbox.RunnerFailed, for background consumers).
func (p *Process) Wait() (Result, error) {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.result, p.err
}

// OutputSoFar returns the streams captured so far.
func (p *Process) OutputSoFar() (stdout, stderr Stream) {
	return p.stdout.snapshot(), p.stderr.snapshot()
}

// Kill terminates the process group: SIGTERM now, SIGKILL after the grace if
// it has not settled. It returns at once and is safe to call repeatedly.
func (p *Process) Kill() {
	p.killed.Store(true)
	select {
	case <-p.done:
		p.reap() // settled: the pid may already belong to someone else
		return
	default:
	}
	p.killOnce.Do(func() {
		pgid := p.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		go p.finish(pgid)
	})
}

// finish kills what is left of the group: SIGKILL once the grace expires
// while the leader or any other member still lives (a member that ignored
// SIGTERM, or one the leader left behind when it died), then closes reaped
// once no live member is left. Members are found in /proc (zombies do not
// count: an orphan's zombie may never be reaped when this process is PID 1
// of a namespace), so a group id nobody uses any more is never signalled.
func (p *Process) finish(pgid int) {
	defer p.reap()
	grace := time.NewTimer(p.grace)
	defer grace.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	done := p.done // nil once the leader settled (a closed channel would spin)
	killed := false
	for {
		if done == nil && !groupAlive(pgid) {
			return
		}
		select {
		case <-grace.C:
			if killed {
				return // a SIGKILLed member did not end within another grace (uninterruptible): give up
			}
			if done != nil || groupAlive(pgid) {
				syscall.Kill(-pgid, syscall.SIGKILL)
			}
			killed = true
			grace.Reset(p.grace)
		case <-tick.C:
		case <-done:
			done = nil
		}
	}
}

func (p *Process) reap() { p.reapOnce.Do(func() { close(p.reaped) }) }

// KillRequested reports whether Kill was called.
func (p *Process) KillRequested() bool { return p.killed.Load() }

// Reaped is closed once, after Kill, the process group has no live member
// left (at once when Kill came after the process settled). It is never
// closed for a process nobody killed.
func (p *Process) Reaped() <-chan struct{} { return p.reaped }
