package inproc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/landlock"
)

// Launcher starts confined children from restricted threads. It is safe for
// concurrent use.
type Launcher struct {
	abi      int
	reuse    bool
	harden   bool
	scoped   uint64
	mu       sync.Mutex
	rulesets map[key]*landlock.Ruleset
	workers  map[key]*worker
	spare    chan chan func() // pre-locked fresh threads waiting for one job

	// onThread, when set (tests), runs on each restricted thread before the start.
	onThread func()
}

type key struct {
	mode sandbox.Mode
	root string
	id   sandbox.FileID
}

// Options configure a launcher.
type Options struct {
	// ReuseThreads keeps one restricted thread per policy alive, locked to a
	// worker goroutine that serves every start for that policy, instead of a
	// fresh thread per start that dies afterwards. The thread still never
	// returns to the scheduler; it dies on Close. Faster (no thread creation
	// per start), at the price of one parked thread per policy in use.
	ReuseThreads bool
	// ABICap, when positive, makes the launcher use no more than Landlock
	// ABI N, as landlock-run --abi-cap N does: it only narrows, and below ABI
	// 5 the launcher reports partial enforcement. For the kernel matrix,
	// which runs the in-process path in its capped columns.
	ABICap int
	// Harden turns on the opt-in hardening, as sandbox.Config.Harden does for
	// the runner: every ruleset scopes signals and abstract unix sockets
	// (Landlock ABI 6; New fails below it, or below an ABICap of 6), and
	// Confine asks spawn to start the command without the environment's
	// secrets (sandbox.ScrubSecrets).
	Harden bool
}

// New returns a launcher for the kernel's Landlock ABI, or an error naming
// why Landlock is not available (nothing can be confined then). Each start
// uses a fresh restricted thread that dies afterwards.
func New() (*Launcher, error) { return NewWithOptions(Options{}) }

// NewWithOptions is New with options.
func NewWithOptions(o Options) (*Launcher, error) {
	kernel, err := landlock.KernelABI()
	if err != nil {
		return nil, fmt.Errorf("inproc: %w", err)
	}
	var scoped uint64
	if o.Harden {
		if err := landlock.ScopeAvailable(kernel, o.ABICap); err != nil {
			return nil, fmt.Errorf("inproc: hardening: %w", err)
		}
		scoped = landlock.ScopeSignal | landlock.ScopeAbstractUnixSocket
	}
	l := &Launcher{abi: landlock.EffectiveABI(kernel, o.ABICap), reuse: o.ReuseThreads, harden: o.Harden, scoped: scoped,
		rulesets: map[key]*landlock.Ruleset{}, workers: map[key]*worker{}}
	if !o.ReuseThreads {
		l.spare = make(chan chan func(), spareThreads)
		for i := 0; i < spareThreads; i++ {
			landlock.GoOffMainThread(l.spareThread)
		}
	}
	return l, nil
}

// spareThreads is how many fresh locked threads wait for a start, so that
// creating the thread that replaces a dying one is off the start's path.
const spareThreads = 2

// spareThread runs on a fresh locked OS thread (never the main thread: see
// landlock.GoOffMainThread), offers it for one job and returns still
// locked afterwards, which ends the thread.
func (l *Launcher) spareThread() {
	job := make(chan func(), 1)
	l.spare <- job
	if fn, ok := <-job; ok {
		fn()
	}
	// Deliberately no UnlockOSThread: the thread dies with this goroutine.
}

// worker is a goroutine locked to a restricted thread serving starts.
type worker struct {
	reqs chan startReq
}

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

func (l *Launcher) worker(k key, rs *landlock.Ruleset) (*worker, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.workers[k]; ok {
		return w, nil
	}
	w := &worker{reqs: make(chan startReq)}
	ready := make(chan error, 1)
	go func() {
		// The restricted thread serves this policy only; when reqs closes,
		// the goroutine returns still locked and the runtime ends the thread.
		ready <- landlock.OnRestrictedThread(rs.FD, func() error {
			ready <- nil
			for r := range w.reqs {
				if l.onThread != nil {
					l.onThread()
				}
				r.done <- r.cmd.Start()
			}
			return nil
		})
	}()
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("inproc: %w", err)
	}
	l.workers[k] = w
	return w, nil
}

// Enforcement is full on ABI 5 and later, partial before.
func (l *Launcher) Enforcement() sandbox.Enforcement {
	if landlock.Partial(l.abi) {
		return sandbox.Partial
	}
	return sandbox.Full
}

func (l *Launcher) ruleset(p sandbox.Policy) (*landlock.Ruleset, error) {
	k := key{p.Mode, p.WorkspaceRoot, p.WorkspaceID}
	l.mu.Lock()
	defer l.mu.Unlock()
	if rs, ok := l.rulesets[k]; ok {
		return rs, nil
	}
	ro, rw := sandbox.LandlockGrants(p)
	rules := landlock.Rules{RO: ro, RW: rw, Scoped: l.scoped}
	if p.WorkspaceID != (sandbox.FileID{}) {
		// Pinned as the runner's --rw-inode pins it (sandbox.LandlockArgs).
		rules.Inodes = map[string]landlock.FileID{p.WorkspaceRoot: {Dev: p.WorkspaceID.Dev, Ino: p.WorkspaceID.Ino}}
	}
	rs, err := landlock.NewRuleset(l.abi, rules)
	if err != nil {
		return nil, fmt.Errorf("inproc: %w", err)
	}
	l.rulesets[k] = rs
	return rs, nil
}

// Backend names the in-process path in a sandbox.Report.
const Backend = "landlock-inproc"

// Confine is the launcher as spawn's Confiner: the call is checked once
// (sandbox.Validate, which also canonicalises the root) and argv is returned
// as given, with Landlock's dialect and a Start that starts the command from
// a thread restricted for the policy; a failure to restrict is then a
// *sandbox.UnavailableError and nothing runs.
func (l *Launcher) Confine(ctx context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
	if err := ctx.Err(); err != nil {
		return sandbox.ConfinedArgv{}, err
	}
	p, err := sandbox.Validate(argv, p)
	if err != nil {
		return sandbox.ConfinedArgv{}, err
	}
	d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	ungoverned := d.Ungoverned
	if l.harden {
		ungoverned = append(ungoverned, sandbox.HardenedUngoverned(sandbox.BackendLandlock, p.Mode)...)
	}
	return sandbox.ConfinedArgv{
		Argv: append([]string(nil), argv...), Backend: Backend, Enforcement: l.Enforcement(),
		DenialSignatures: d.DenialSignatures, Ungoverned: ungoverned, Policy: p,
		Isolated: sandbox.Isolation(sandbox.BackendLandlock, l.harden), ScrubSecrets: l.harden,
		Start: func(cmd *exec.Cmd) error {
			err := l.start(cmd, p)
			var f *landlock.Fatal
			if err != nil && cmd.Process == nil && errors.As(err, &f) {
				return &sandbox.UnavailableError{Mode: p.Mode, Detail: err.Error()}
			}
			return err
		},
	}, nil
}

// Start starts cmd confined by policy p, checked first by sandbox.Validate
// (a confined mode, an existing absolute workspace root, canonicalised, not
// redirected through a temp-area symlink). The caller waits for cmd as
// usual. Errors: bad input (wrapping sandbox.ErrBadInput), a ruleset or
// restriction failure, or cmd.Start's own error; nothing runs on error.
func (l *Launcher) Start(cmd *exec.Cmd, p sandbox.Policy) error {
	p, err := sandbox.Validate(cmd.Args, p)
	if err != nil {
		return err
	}
	return l.start(cmd, p)
}

// start starts cmd under the checked policy p.
func (l *Launcher) start(cmd *exec.Cmd, p sandbox.Policy) error {
	rs, err := l.ruleset(p)
	if err != nil {
		return err
	}
	if l.reuse {
		w, err := l.worker(key{p.Mode, p.WorkspaceRoot, p.WorkspaceID}, rs)
		if err != nil {
			return err
		}
		done := make(chan error, 1)
		w.reqs <- startReq{cmd, done}
		return <-done
	}
	job := <-l.spare
	landlock.GoOffMainThread(l.spareThread) // replace it, off this start's path
	done := make(chan error, 1)
	job <- func() {
		if err := landlock.RestrictThisThread(rs.FD); err != nil {
			done <- fmt.Errorf("inproc: %w", err)
			return
		}
		if l.onThread != nil {
			l.onThread()
		}
		done <- cmd.Start()
	}
	return <-done
}

// Close ends the worker threads (ReuseThreads) and closes every cached
// ruleset fd. Starts must not race with Close.
func (l *Launcher) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, w := range l.workers {
		close(w.reqs)
		delete(l.workers, k)
	}
	for k, rs := range l.rulesets {
		rs.Close()
		delete(l.rulesets, k)
	}
	return nil
}
