package inproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/internal/execstop"
	"github.com/dshsim/dshsim/sandbox/internal/llsys"
	"github.com/dshsim/dshsim/sandbox/internal/seal"
	"github.com/dshsim/dshsim/sandbox/landlock"
	"github.com/dshsim/dshsim/sandbox/procfs"
)

// Launcher starts confined children from restricted threads. It is safe for
// concurrent use.
type Launcher struct {
	abi     int
	harden  bool
	scoped  uint64
	nest    *os.File // the nest ruleset (landlock.NewNestRuleset), every command's extra descriptor
	nproc   childNproc
	unsafe  knobs
	mu      sync.Mutex
	workers map[key]*worker
	ticks   uint64 // counts acquires, for the workers' recency

	// rulesets (guarded by mu) are the open rulesets of the kept workers.
	rulesets map[key]*landlock.Ruleset

	// facts are what Confine reports per confined mode, made once by New
	// (clipped: a caller that appends gets its own copy).
	facts map[sandbox.Mode]facts

	// room reports whether this process may make one more thread (tests replace it).
	room func() error
	// onThread, when set (tests), runs on each restricted thread before the start.
	onThread func()
}

// knobs take a protection away, for the tests that show what each one
// stops (never set outside them).
type knobs struct {
	noNest   bool // start commands in the thread's own domain
	dumpable bool // leave this process dumpable
}

// facts are Landlock's dialect and admissions for one mode, as the runner
// reports them.
type facts struct{ denials, ungoverned, isolated []string }

// factsOf is what a launcher reports for mode: Landlock's dialect, its
// Ungoverned list (with the hardening's admissions when hardened), and
// what it isolates ([isolationOf]).
func factsOf(mode sandbox.Mode, harden, scopes bool) facts {
	d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	ungoverned := d.Ungoverned
	if harden {
		ungoverned = append(ungoverned, sandbox.HardenedUngoverned(sandbox.BackendLandlock, mode)...)
	}
	return facts{slices.Clip(d.DenialSignatures), slices.Clip(ungoverned), slices.Clip(isolationOf(harden, scopes))}
}

// isolationOf is what every command of a launcher is kept from beyond
// files: this process ([IsolatedAgent]), always; signals to any process
// outside its own nested domain where the kernel has scopes (ABI 6); and
// the hardening's other effects when hardened (its signal scoping is the
// nested layer's already; its agent entry is the runner's, this one's is
// IsolatedAgent). Pure.
func isolationOf(harden, scopes bool) []string {
	out := []string{IsolatedAgent}
	if scopes {
		out = append(out, IsolatedNestedSignal)
	}
	for _, e := range sandbox.Isolation(sandbox.BackendLandlock, harden) {
		if !strings.HasPrefix(e, sandbox.IsolatedSignal+":") && !strings.HasPrefix(e, sandbox.IsolatedAgent+":") {
			out = append(out, e)
		}
	}
	return out
}

// IsolatedAgent is what every command a launcher starts is kept from, as
// its report lists it (package doc, Why the agent is out of reach).
const IsolatedAgent = sandbox.IsolatedAgent + ": the command runs in a Landlock domain of its own, nested below its restricted thread's, and this process is not dumpable: it can neither trace any thread of this process nor read or write its memory or open its descriptors"

// IsolatedNestedSignal is the signal isolation of the nested layer.
const IsolatedNestedSignal = sandbox.IsolatedSignal + ": Landlock scoping of the command's own nested domain (ABI 6): it can signal only what it started"

type key struct {
	mode sandbox.Mode
	root string
	id   sandbox.FileID
}

// Options configure a launcher.
type Options struct {
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
// why the in-process path is not available (nothing can be confined then).
// It makes this process not dumpable, for good (see the package doc).
func New() (*Launcher, error) { return NewWithOptions(Options{}) }

// dumpMu orders the changes of this process's dumpable flag: New's, and
// WhileDumpable's round trips.
var dumpMu sync.Mutex

// WhileDumpable runs start with this process dumpable again when a
// launcher made it not dumpable, and makes it not dumpable again after:
// for a start that a process which is not dumpable cannot make. Starting a
// child into a new user namespace is one: its parent writes the child's
// uid_map, which the kernel gives to root while the child (a copy of this
// process until it executes) is not dumpable, so as a normal user the start
// fails with EACCES. Starts run one at a time. A command a launcher started
// stays out of reach meanwhile: its own Landlock domain keeps it from
// tracing this process, reading its memory or opening its descriptors; not
// being dumpable is the second guard. An error restoring the flag is
// returned (start's first).
func WhileDumpable(start func() error) error {
	dumpMu.Lock()
	defer dumpMu.Unlock()
	if on, err := llsys.Dumpable(); err != nil || on {
		return start()
	}
	if err := llsys.SetDumpable(true); err != nil {
		return fmt.Errorf("inproc: cannot make this process dumpable for a start (prctl PR_SET_DUMPABLE): %w", err)
	}
	err := start()
	if rerr := llsys.SetDumpable(false); rerr != nil && err == nil {
		err = fmt.Errorf("inproc: cannot make this process not dumpable again (prctl PR_SET_DUMPABLE): %w", rerr)
	}
	return err
}

// NewWithOptions is New with options.
func NewWithOptions(o Options) (*Launcher, error) { return newLauncher(o, knobs{}) }

func newLauncher(o Options, k knobs) (*Launcher, error) {
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
	abi := landlock.EffectiveABI(kernel, o.ABICap)
	if !k.dumpable {
		dumpMu.Lock()
		err := llsys.SetDumpable(false)
		dumpMu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("inproc: cannot make this process not dumpable (prctl PR_SET_DUMPABLE): %w", err)
		}
	}
	nest, err := landlock.NewNestRuleset(kernel, o.ABICap)
	if err != nil {
		return nil, fmt.Errorf("inproc: the nested layer: %w", err)
	}
	nproc, err := childNprocOf(os.Getuid())
	if err != nil {
		nest.Close()
		return nil, fmt.Errorf("inproc: %w", err)
	}
	l := &Launcher{abi: abi, harden: o.Harden, scoped: scoped, unsafe: k, nproc: nproc,
		nest:     os.NewFile(uintptr(nest.FD), "landlock-nest"),
		rulesets: map[key]*landlock.Ruleset{}, workers: map[key]*worker{}, facts: map[sandbox.Mode]facts{}}
	l.room = func() error { return roomForThread(os.Getuid(), nproc.agentSoft) }
	scopes := landlock.ScopeAvailable(kernel, o.ABICap) == nil
	for _, m := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		l.facts[m] = factsOf(m, o.Harden, scopes)
	}
	return l, nil
}

// worker is a goroutine locked to a restricted thread serving the starts
// of one policy; l.mu guards users and used.
type worker struct {
	reqs  chan startReq
	users int    // starts handed to it and not yet answered
	used  uint64 // l.ticks at its last acquire
}

type startReq struct {
	cmd    *exec.Cmd
	limits sandbox.Limits
	done   chan error
}

// maxWorkers bounds the restricted threads a launcher keeps: past it, the
// least recently used idle worker ends (its thread dies, its ruleset is
// closed) when another is made. A deployment confines a few policies (its
// workspace read-only and writable); the escape corpus, a fresh workspace
// per attack.
const maxWorkers = 8

// keyOf is the key of a checked policy: the rulesets and the threads are
// keyed by the whole policy as sandbox.Validate granted it. Landlock
// restrictions only stack, so a thread restricted for one key may never
// start a command of another (see the package doc, Why a reused thread is
// safe).
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
	if err := l.room(); err != nil {
		return nil, err
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
				r.done <- l.startNested(r.cmd, r.limits)
			}
			return nil
		})
	}()
	if err := <-ready; err != nil {
		rs.Close()
		delete(l.rulesets, k)
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
// maxWorkers are kept (l.mu is held). A busy worker is never ended: it
// has a start in flight, whose request would go to a closed channel.
func (l *Launcher) evictLocked() {
	for len(l.workers) > maxWorkers {
		victim, ok := lruIdle(l.workers)
		if !ok {
			return // every worker is busy: keep them until they are idle
		}
		close(l.workers[victim].reqs)
		delete(l.workers, victim)
		if rs, ok := l.rulesets[victim]; ok {
			rs.Close()
			delete(l.rulesets, victim)
		}
	}
}

// lruIdle is the key of the least recently used worker with no start in
// flight; false when every worker is busy.
func lruIdle(workers map[key]*worker) (key, bool) {
	var victim key
	var oldest *worker
	for k, w := range workers {
		if w.users == 0 && (oldest == nil || w.used < oldest.used) {
			victim, oldest = k, w
		}
	}
	return victim, oldest != nil
}

// Enforcement is full on ABI 5 and later, partial before.
func (l *Launcher) Enforcement() sandbox.Enforcement {
	if landlock.Partial(l.abi) {
		return sandbox.Partial
	}
	return sandbox.Full
}

// rulesetLocked returns the ruleset of policy p, built on first use (l.mu
// held).
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
// (read-only /, and the hardening's scoping; and a writable /dev/null,
// which a start opens for the command's unset streams), as landlock-run
// --probe does, and starts /bin/true from it in a nested domain of its
// own, as every command starts: nil means the in-process path works in
// this process, else why not.
func (l *Launcher) Probe() error {
	if err := l.room(); err != nil {
		return err
	}
	rs, err := landlock.NewRuleset(l.abi, landlock.Rules{RO: []string{"/"}, RW: []string{"/dev/null"}, Scoped: l.scoped})
	if err != nil {
		return fmt.Errorf("inproc: %w", err)
	}
	defer rs.Close()
	err = landlock.OnRestrictedThread(rs.FD, func() error {
		cmd := exec.Command("/bin/true")
		if err := l.startNested(cmd, sandbox.Limits{}); err != nil {
			return err
		}
		return cmd.Wait()
	})
	if err != nil {
		return fmt.Errorf("inproc: %w", err)
	}
	return nil
}

// Backend names the in-process path in a sandbox.Report.
const Backend = "landlock-inproc"

// Confine is the launcher as spawn's Confiner: the call is checked once
// (sandbox.Validate, which also canonicalises the root) and argv is returned
// as given, with Landlock's dialect and a Start that starts the command from
// a thread restricted for the policy, in a domain of its own below it; a
// failure to restrict or to nest is then a *sandbox.UnavailableError and
// nothing runs.
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
		Isolated: f.isolated, ScrubSecrets: l.harden, NoCapabilities: true, SetsLimits: true,
		Start: func(cmd *exec.Cmd) error {
			err := l.start(cmd, p)
			var f *landlock.Fatal
			if err != nil && errors.As(err, &f) {
				return &sandbox.UnavailableError{Mode: p.Mode, Detail: err.Error()}
			}
			return err
		},
	}, nil
}

// Start starts cmd confined by policy p, checked first by sandbox.Validate
// (a confined mode, an existing absolute workspace root, canonicalised, not
// redirected through a temp-area symlink). The caller waits for cmd as
// usual. Errors: bad input (wrapping sandbox.ErrBadInput), a ruleset,
// restriction or nesting failure (a *landlock.Fatal), or cmd.Start's own
// error; nothing runs on error.
func (l *Launcher) Start(cmd *exec.Cmd, p sandbox.Policy) error {
	p, err := sandbox.Validate(cmd.Args, p)
	if err != nil {
		return err
	}
	return l.start(cmd, p)
}

// start starts cmd under the checked policy p from its worker's thread.
// Below ABI 5 it first writes the runner's partial notice on cmd.Stderr, as
// landlock-run prints it on the stderr it hands the command: after the
// rules are built (a rule that cannot be granted fails without it), before
// the command starts.
func (l *Launcher) start(cmd *exec.Cmd, p sandbox.Policy) error {
	w, err := l.acquire(p)
	if err != nil {
		return err
	}
	defer l.release(w)
	l.notice(cmd)
	done := make(chan error, 1)
	w.reqs <- startReq{cmd, p.Limits, done}
	return <-done
}

// startNested starts cmd from the calling restricted thread, stopped before
// its first instruction (package execstop), where it enforces the nest
// ruleset on itself (handed to it as one more inherited descriptor, which
// it then closes) and gets its process limit and the call's limits; only
// then does it run. A failure there kills it before it ran anything, as a
// *landlock.Fatal.
func (l *Launcher) startNested(cmd *exec.Cmd, limits sandbox.Limits) error {
	extra := cmd.ExtraFiles
	cmd.ExtraFiles = append(slices.Clip(extra), l.nest)
	fd := 3 + len(extra)
	err := execstop.Start(cmd, func(s execstop.Stopped) error {
		if !l.unsafe.noNest {
			if err := s.RestrictSelf(fd); err != nil {
				return err
			}
		}
		return s.Limits(l.nproc.with(limits.Rlimits()))
	})
	cmd.ExtraFiles = extra
	if err != nil && cmd.Process != nil {
		return &landlock.Fatal{Msg: "cannot start the command in a domain of its own: " + err.Error()}
	}
	return err
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

// Close ends the worker threads and closes every ruleset. Starts must not
// race with Close.
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
	return l.nest.Close()
}

// threadReserve is how many of its user's RLIMIT_NPROC slots the launcher
// keeps for this process: a restricted thread is made only with that many
// free, and every command's limit is that many below this process's, so
// that what commands start can never take the last ones (a thread this
// process cannot create aborts it: the Go runtime cannot recover from it).
const threadReserve = 16

// roomForThread fails when user uid (not root, which RLIMIT_NPROC does not
// bind) has fewer than threadReserve of its soft limit free.
func roomForThread(uid int, soft uint64) error {
	if uid == 0 || soft == rlimInfinity {
		return nil
	}
	n, err := procfs.Proc.UserTasks(uid)
	if err != nil {
		return fmt.Errorf("inproc: count the processes of uid %d: %w", uid, err)
	}
	if !roomFor(n, soft) {
		return &landlock.Fatal{Msg: fmt.Sprintf("no room for a restricted thread: uid %d runs %d processes and threads of the %d its RLIMIT_NPROC allows, and %d are kept for this process", uid, n, soft, threadReserve)}
	}
	return nil
}

// roomFor reports whether n tasks leave threadReserve free under soft. Pure.
func roomFor(n int, soft uint64) bool { return uint64(n)+threadReserve <= soft }

// rlimInfinity is RLIM_INFINITY.
const rlimInfinity = ^uint64(0)

// childNproc is the RLIMIT_NPROC every command gets: threadReserve below
// this process's soft limit, soft and hard (so it cannot raise it back).
type childNproc struct {
	agentSoft uint64
	limit     uint64 // 0: none set (root, or no limit)
}

// childNprocOf reads this process's RLIMIT_NPROC for user uid.
func childNprocOf(uid int) (childNproc, error) {
	soft, _, err := llsys.Getrlimit(llsys.RlimitNproc)
	if err != nil {
		return childNproc{}, fmt.Errorf("read RLIMIT_NPROC: %w", err)
	}
	return childNproc{agentSoft: soft, limit: childLimit(uid, soft)}, nil
}

// childLimit is a command's RLIMIT_NPROC for a process of user uid whose
// soft limit is soft: none for root (not bound by it) or without a limit,
// else threadReserve below soft, and at least 1. Pure.
func childLimit(uid int, soft uint64) uint64 {
	if uid == 0 || soft == rlimInfinity {
		return 0
	}
	if soft <= threadReserve {
		return 1
	}
	return soft - threadReserve
}

// with is rs with this process's reserve kept: the call's RLIMIT_NPROC, or
// none, lowered to c.limit when c sets one. Pure.
func (c childNproc) with(rs []sandbox.Rlimit) []sandbox.Rlimit {
	if c.limit == 0 {
		return rs
	}
	out := append([]sandbox.Rlimit(nil), rs...)
	for i, r := range out {
		if r.Resource == llsys.RlimitNproc {
			out[i].Soft, out[i].Hard = min(r.Soft, c.limit), min(r.Hard, c.limit)
			return out
		}
	}
	return append(out, sandbox.Rlimit{Resource: llsys.RlimitNproc, Soft: c.limit, Hard: c.limit})
}

// Sealed makes Launcher a spawn.Confiner (the interface is closed to the sandbox tree).
func (*Launcher) Sealed(seal.Token) {}
