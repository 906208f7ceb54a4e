package inproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
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
	ticks    uint64           // counts acquires, for the workers' recency
	spare    chan chan func() // pre-locked fresh threads waiting for one job

	// facts are what Confine reports per confined mode, made once by New
	// (clipped: a caller that appends gets its own copy).
	facts map[sandbox.Mode]facts

	// onThread, when set (tests), runs on each restricted thread before the start.
	onThread func()
}

// facts are Landlock's dialect and admissions for one mode, as the runner
// reports them.
type facts struct{ denials, ungoverned, isolated []string }

// factsOf is what a launcher reports for mode: Landlock's dialect, its
// Ungoverned list (with the hardening's admissions when hardened), and
// what the hardening isolates.
func factsOf(mode sandbox.Mode, harden bool) facts {
	d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	ungoverned := d.Ungoverned
	if harden {
		ungoverned = append(ungoverned, sandbox.HardenedUngoverned(sandbox.BackendLandlock, mode)...)
	}
	return facts{slices.Clip(d.DenialSignatures), slices.Clip(ungoverned), slices.Clip(sandbox.Isolation(sandbox.BackendLandlock, harden))}
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
	// returns to the scheduler; it dies on Close, or when it is the least
	// recently used idle one of more than eight. Faster (no thread creation
	// per start), at the price of a parked thread per policy in use. The
	// package doc (Why a reused thread is safe) says why a reused thread
	// never carries one policy's restriction to another's call.
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
		rulesets: map[key]*landlock.Ruleset{}, workers: map[key]*worker{}, facts: map[sandbox.Mode]facts{}}
	for _, m := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		l.facts[m] = factsOf(m, o.Harden)
	}
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

// worker is a goroutine locked to a restricted thread serving the starts
// of one policy (ReuseThreads); l.mu guards users and used.
type worker struct {
	reqs  chan startReq
	users int    // starts handed to it and not yet answered
	used  uint64 // l.ticks at its last acquire
}

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

// maxWorkers bounds the restricted threads ReuseThreads keeps: past it, the
// least recently used idle worker ends (its thread dies, its ruleset is
// closed) when another is made. A deployment confines a few policies (its
// workspace read-only and writable); the escape corpus, a fresh workspace
// per attack.
const maxWorkers = 8

// keyOf is the key of a checked policy: the ruleset cache and the reused
// threads are keyed by the whole policy as sandbox.Validate granted it.
// Landlock restrictions only stack, so a thread restricted for one key may
// never start a command of another (see the package doc, Why a reused
// thread is safe).
func keyOf(p sandbox.Policy) key { return key{p.Mode, p.WorkspaceRoot, p.WorkspaceID} }

// acquire returns the worker of policy p, made (its thread restricted by
// p's ruleset) if there is none, and counts a start on it; release undoes
// the count.
func (l *Launcher) acquire(p sandbox.Policy) (*worker, error) {
	k := keyOf(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ticks++
	if w, ok := l.workers[k]; ok {
		w.users++
		w.used = l.ticks
		return w, nil
	}
	rs, err := l.rulesetLocked(p)
	if err != nil {
		return nil, err
	}
	w := &worker{reqs: make(chan startReq), users: 1, used: l.ticks}
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
	l.evictLocked()
	return w, nil
}

func (l *Launcher) release(w *worker) {
	l.mu.Lock()
	w.users--
	l.mu.Unlock()
}

// evictLocked ends the least recently used idle workers while more than
// maxWorkers are kept (l.mu is held).
func (l *Launcher) evictLocked() {
	for len(l.workers) > maxWorkers {
		var victim key
		var oldest *worker
		for k, w := range l.workers {
			if w.users == 0 && (oldest == nil || w.used < oldest.used) {
				victim, oldest = k, w
			}
		}
		if oldest == nil {
			return // every worker is busy: keep them until they are idle
		}
		close(oldest.reqs)
		delete(l.workers, victim)
		if rs, ok := l.rulesets[victim]; ok {
			rs.Close()
			delete(l.rulesets, victim)
		}
	}
}

// Enforcement is full on ABI 5 and later, partial before.
func (l *Launcher) Enforcement() sandbox.Enforcement {
	if landlock.Partial(l.abi) {
		return sandbox.Partial
	}
	return sandbox.Full
}

// ruleset returns the cached ruleset of policy p, built on first use.
func (l *Launcher) ruleset(p sandbox.Policy) (*landlock.Ruleset, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rulesetLocked(p)
}

// rulesetLocked is ruleset with l.mu held.
func (l *Launcher) rulesetLocked(p sandbox.Policy) (*landlock.Ruleset, error) {
	k := keyOf(p)
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

// Probe restricts a throwaway thread with the runner's probe ruleset
// (read-only /, and the hardening's scoping), as landlock-run --probe
// does, and returns why it cannot, or nil: the in-process path works in
// this process.
func (l *Launcher) Probe() error {
	rs, err := landlock.NewRuleset(l.abi, landlock.Rules{RO: []string{"/"}, Scoped: l.scoped})
	if err != nil {
		return fmt.Errorf("inproc: %w", err)
	}
	defer rs.Close()
	if err := landlock.OnRestrictedThread(rs.FD, nil); err != nil {
		return fmt.Errorf("inproc: %w", err)
	}
	return nil
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
	f := l.facts[p.Mode]
	return sandbox.ConfinedArgv{
		Argv: append([]string(nil), argv...), Backend: Backend, Enforcement: l.Enforcement(),
		DenialSignatures: f.denials, Ungoverned: f.ungoverned, Policy: p,
		Isolated: f.isolated, ScrubSecrets: l.harden,
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

// start starts cmd under the checked policy p. Below ABI 5 it first writes
// the runner's partial notice on cmd.Stderr, as landlock-run prints it on
// the stderr it hands the command: after the rules are built (a rule that
// cannot be granted fails without it), before the command starts. A start
// whose restriction then fails (on a fresh thread) has written it; the
// caller gets the *landlock.Fatal and nothing runs.
func (l *Launcher) start(cmd *exec.Cmd, p sandbox.Policy) error {
	if l.reuse {
		w, err := l.acquire(p)
		if err != nil {
			return err
		}
		defer l.release(w)
		l.notice(cmd)
		done := make(chan error, 1)
		w.reqs <- startReq{cmd, done}
		return <-done
	}
	rs, err := l.ruleset(p)
	if err != nil {
		return err
	}
	l.notice(cmd)
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

// notice writes the runner's partial notice on cmd.Stderr when the ABI in
// use is older than the runner's full one (landlock.Partial), as
// landlock-run does; a nil cmd.Stderr is /dev/null, where the runner's
// notice would go too.
func (l *Launcher) notice(cmd *exec.Cmd) {
	if landlock.Partial(l.abi) && cmd.Stderr != nil {
		io.WriteString(cmd.Stderr, landlock.PartialNotice+"\n")
	}
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
