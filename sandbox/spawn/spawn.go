package spawn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/landlock"
)

// DefaultGrace is the delay between SIGTERM and SIGKILL when a process group is killed.
const DefaultGrace = 2 * time.Second

// Confiner wraps argv for a policy; *sandbox.Provider is one.
type Confiner interface {
	Confine(ctx context.Context, argv []string, policy sandbox.Policy) (sandbox.ConfinedArgv, error)
}

// Request is one execution.
type Request struct {
	// Argv is the command, usually {"bash", "-c", cmd}.
	Argv []string
	// Policy is this call's policy; danger-full-access bypasses Confiner.
	Policy sandbox.Policy
	// Confiner wraps Argv for confined modes (required for them).
	Confiner Confiner
	// Dir is the working directory; "" means Policy.WorkspaceRoot.
	Dir string
	// Env is the full environment; nil inherits the process environment.
	Env []string
	// Stdin is the standard input; nil is /dev/null.
	Stdin io.Reader
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
	// InProcess, when set, confines confined modes in-process with Landlock
	// (package sandbox/inproc) instead of asking Confiner for wrapped argv:
	// Argv runs as given from a restricted thread; the backend is
	// "landlock-inproc" with Landlock's denial dialect. A failure to restrict
	// is a *sandbox.UnavailableError; nothing runs.
	InProcess *inproc.Launcher
}

// BackendInProcess names the in-process Landlock path in Result.Backend.
const BackendInProcess = "landlock-inproc"

// Facts are the sandbox facts of one run.
type Facts struct {
	// Mode is the mode the call actually ran under.
	Mode sandbox.Mode
	// Denied reports that the sandbox blocked a file effect.
	Denied bool
	// Enforcement is the backend's level; "" for danger-full-access.
	Enforcement sandbox.Enforcement
	// RunnerFailed reports that the runner failed before running the command.
	RunnerFailed bool
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
	// Sandbox holds the facts: {danger-full-access, false} for a bypassed
	// run, else mode, denial, enforcement and runner failure.
	Sandbox Facts
	// Backend is the backend that confined the run ("" when bypassed).
	Backend string
	// Argv is the argv actually spawned (the wrapped one when confined).
	Argv []string
}

// Foreground converts r into the renderer's input; timeoutMs is the timeout
// to report when r.TimedOut.
func (r Result) Foreground(timeoutMs int64) render.Foreground {
	return render.Foreground{
		ExitCode: r.ExitCode, Signaled: r.Signaled, Signal: r.Signal,
		TimedOut: r.TimedOut, TimeoutMs: timeoutMs,
		Stdout:  render.Stream{Text: r.Stdout.Text, Truncated: r.Stdout.Truncated, SpillPath: r.Stdout.FullPath},
		Stderr:  render.Stream{Text: r.Stderr.Text, Truncated: r.Stderr.Truncated, SpillPath: r.Stderr.FullPath},
		Sandbox: &render.Sandbox{Mode: r.Sandbox.Mode, Denied: r.Sandbox.Denied, Enforcement: r.Sandbox.Enforcement, RunnerFailed: r.Sandbox.RunnerFailed},
	}
}

// Process is a started execution.
type Process struct {
	cmd            *exec.Cmd
	wrapped        *sandbox.ConfinedArgv
	mode           sandbox.Mode
	grace          time.Duration
	stdout, stderr *capture
	done           chan struct{}
	killOnce       sync.Once
	timedOut       bool
	mu             sync.Mutex
	result         Result
	err            error
	stopWatch      func() bool
}

// Start confines (unless danger-full-access) and starts req.Argv in its own
// session and process group (no controlling terminal). Errors: ctx already done; an empty argv; a confined mode
// without a Confiner; any Confine error, unchanged (including
// *sandbox.UnavailableError and bad input); a confined argv that does not
// wrap req.Argv as <runner> [profile] -- <argv> (a passthrough); descriptors
// that cannot be kept from a confined command; a workdir
// the bwrap profile hides ([sandbox.BwrapHidesWorkdir]); a start failure attributed to the
// runner (sandbox.IsRunnerSpawnFailure) as *sandbox.UnavailableError with
// detail "Error: spawn <runner> <CODE>"; any other start error unchanged.
// Nothing runs when Start fails. Before a confined start every descriptor
// of this process from 3 up is marked close-on-exec (process-wide: inherited
// descriptors reach no later child either). Cancelling ctx kills the process group
// (SIGTERM, then SIGKILL after the grace).
func Start(ctx context.Context, req Request) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req.Argv) == 0 {
		return nil, errors.New("spawn: empty argv")
	}
	p := &Process{mode: req.Policy.Mode, grace: req.Grace, done: make(chan struct{})}
	if p.grace <= 0 {
		p.grace = DefaultGrace
	}
	argv := req.Argv
	switch {
	case req.Policy.Mode == sandbox.DangerFullAccess:
	case req.InProcess != nil:
		if err := sandbox.ValidatePolicy(req.Policy); err != nil {
			return nil, err
		}
		d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
		p.wrapped = &sandbox.ConfinedArgv{Argv: argv, Backend: BackendInProcess, Enforcement: req.InProcess.Enforcement(), DenialSignatures: d.DenialSignatures}
	default:
		if req.Confiner == nil {
			return nil, errors.New("spawn: mode " + string(req.Policy.Mode) + " needs a Confiner")
		}
		w, err := req.Confiner.Confine(ctx, req.Argv, req.Policy)
		if err != nil {
			return nil, err
		}
		if !wraps(w.Argv, req.Argv) {
			return nil, fmt.Errorf("spawn: the %q confiner returned %q, which does not wrap the command as <runner> [profile] -- %q; refusing to run it", w.Backend, w.Argv, req.Argv)
		}
		if w.Backend == sandbox.BackendBwrap || w.Backend == sandbox.BackendRunnerCommand {
			dir := req.Dir
			if dir == "" {
				dir = req.Policy.WorkspaceRoot
			}
			cp := req.Policy
			cp.WorkspaceRoot = sandbox.CanonicalPath(cp.WorkspaceRoot)
			if sandbox.BwrapHidesWorkdir(cp, sandbox.CanonicalPath(dir)) {
				return nil, fmt.Errorf("spawn: workdir %q is under /tmp, which the %s profile covers with an empty tmpfs in %s mode (only the workspace %q is bound on top): the command would silently start in $HOME or / instead; refusing to run it", dir, w.Backend, req.Policy.Mode, cp.WorkspaceRoot)
			}
		}
		p.wrapped = &w
		argv = w.Argv
	}
	tail := req.TailBytes
	if tail <= 0 {
		tail = DefaultTailBytes
	}
	outDir := req.OutputDir
	if outDir == "" {
		outDir = os.TempDir()
	}
	p.stdout, p.stderr = newCapture(tail, outDir, "stdout"), newCapture(tail, outDir, "stderr")
	dir := req.Dir
	if dir == "" {
		dir = req.Policy.WorkspaceRoot
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, req.Env, req.Stdin
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	// A new session, not only a process group (like Node's detached spawn):
	// with the caller's controlling terminal a confined command could type
	// into the user's shell with TIOCSTI, which then runs it unconfined.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// A daemonised grandchild holding the pipes must not hold Wait forever.
	cmd.WaitDelay = p.grace
	p.cmd = cmd
	p.result.Argv = append([]string(nil), argv...)
	if p.wrapped != nil {
		// Neither bwrap nor Landlock governs a descriptor that is already
		// open: one this process inherited without close-on-exec (Go marks
		// only its own) would let the command write where it points.
		if err := closeOnExecAbove2(); err != nil {
			p.stdout.close()
			p.stderr.close()
			return nil, err
		}
	}
	start := cmd.Start
	if req.InProcess != nil && p.wrapped != nil {
		start = func() error { return req.InProcess.Start(cmd, req.Policy) }
	}
	if err := start(); err != nil {
		p.stdout.close()
		p.stderr.close()
		if req.InProcess != nil && p.wrapped != nil {
			if cmd.Process == nil && isRestrictFailure(err) {
				return nil, &sandbox.UnavailableError{Mode: p.mode, Detail: err.Error()}
			}
			return nil, err
		}
		if p.wrapped != nil && sandbox.IsRunnerSpawnFailure(err, argv[0], cmd.Path, dir) {
			return nil, &sandbox.UnavailableError{Mode: p.mode, Detail: sandbox.SpawnFailureDetail(err, argv[0])}
		}
		return nil, err
	}
	p.stopWatch = context.AfterFunc(ctx, p.Kill)
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
		werr := cmd.Wait()
		if timer != nil {
			timer.Stop()
		}
		p.stopWatch()
		p.stdout.close()
		p.stderr.close()
		p.settle(werr)
		close(p.done)
	}()
	return p, nil
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

// isRestrictFailure reports an in-process confinement failure (as opposed
// to the command's own start error).
func isRestrictFailure(err error) bool {
	var f *landlock.Fatal
	return errors.As(err, &f)
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
	// --8<-- [start:outcome-order]
	r.Sandbox = Facts{Mode: p.mode}
	if p.wrapped == nil {
		return
	}
	r.Backend = p.wrapped.Backend
	r.Sandbox.Enforcement = p.wrapped.Enforcement
	if detail, ok := sandbox.ClassifyRunnerFailure(r.ExitCode, r.Signaled, r.Stderr.Text, p.wrapped.RunnerFailureRules); ok {
		r.Sandbox.RunnerFailed = true
		p.err = &sandbox.UnavailableError{Mode: p.mode, Detail: detail}
		return
	}
	r.Sandbox.Denied = sandbox.IsDenial(r.ExitCode, r.Signaled, r.Stderr.Text, p.wrapped.DenialSignatures)
	// --8<-- [end:outcome-order]
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
	select {
	case <-p.done:
		return // settled: the pid may already belong to someone else
	default:
	}
	p.killOnce.Do(func() {
		pgid := p.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		go func() {
			select {
			case <-p.done:
			case <-time.After(p.grace):
				syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}()
	})
}
