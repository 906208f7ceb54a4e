// Package inproc confines a child process of the calling Go program without a
// runner binary: it restricts one locked OS thread with Landlock, starts the
// child from that thread (fork/exec inherits the thread's Landlock domain),
// and lets the thread die.
//
// # Why it is safe for the parent
//
// Landlock's landlock_restrict_self without TSYNC confines only the calling
// thread. The thread is locked with runtime.LockOSThread before it is
// restricted and is never unlocked: when its goroutine returns, the Go
// runtime terminates the thread instead of handing it to other goroutines.
// While it is locked, threads the runtime needs are cloned by its template
// thread, not by the restricted one. So no other goroutine ever runs
// confined, and the parent keeps writing where it likes. The main thread,
// which the runtime cannot let exit, is never used.
//
// # Rules
//
// The rules are the Landlock runner's for the policy (sandbox.LandlockGrants:
// read-only /, writable /dev/null, plus /tmp and the workspace in
// workspace-write), built once per (mode, canonical root) and cached as an
// open ruleset fd for the launcher's lifetime. Enforcement is partial below
// ABI 5, exactly as the runner reports it; no notice is printed.
//
// # Use
//
//	l, err := inproc.New()        // fails when the kernel has no Landlock
//	cmd := exec.Command("bash", "-c", script)
//	err = l.Start(cmd, policy)    // then cmd.Wait() from any goroutine
//
// It keeps the argv-wrapping contract of package sandbox intact: this is an
// extra path for Go callers, not a replacement for Provider.Confine.
package inproc

import (
	"fmt"
	"os/exec"
	"sync"

	"github.com/dshsim/dshsim/internal/landlockrun"
	"github.com/dshsim/dshsim/sandbox"
)

// Launcher starts confined children from restricted threads. It is safe for
// concurrent use.
type Launcher struct {
	abi      int
	mu       sync.Mutex
	rulesets map[key]*landlockrun.Ruleset

	// onThread, when set (tests), runs on each restricted thread before the start.
	onThread func()
}

type key struct {
	mode sandbox.Mode
	root string
}

// New returns a launcher for the kernel's Landlock ABI, or an error naming
// why Landlock is not available (nothing can be confined then).
func New() (*Launcher, error) {
	kernel, err := landlockrun.KernelABI()
	if err != nil {
		return nil, fmt.Errorf("inproc: %w", err)
	}
	return &Launcher{abi: landlockrun.EffectiveABI(kernel, 0), rulesets: map[key]*landlockrun.Ruleset{}}, nil
}

// Enforcement is full on ABI 5 and later, partial before.
func (l *Launcher) Enforcement() sandbox.Enforcement {
	if landlockrun.Partial(l.abi) {
		return sandbox.Partial
	}
	return sandbox.Full
}

func (l *Launcher) ruleset(p sandbox.Policy) (*landlockrun.Ruleset, error) {
	k := key{p.Mode, p.WorkspaceRoot}
	l.mu.Lock()
	defer l.mu.Unlock()
	if rs, ok := l.rulesets[k]; ok {
		return rs, nil
	}
	ro, rw := sandbox.LandlockGrants(p)
	rs, err := landlockrun.NewRuleset(l.abi, ro, rw)
	if err != nil {
		return nil, fmt.Errorf("inproc: %w", err)
	}
	l.rulesets[k] = rs
	return rs, nil
}

// Start starts cmd confined by policy p (a confined mode and an existing
// absolute workspace root, canonicalised here). The caller waits for cmd as
// usual. Errors: bad policy (wrapping sandbox.ErrBadInput), a ruleset or
// restriction failure, or cmd.Start's own error; nothing runs on error.
func (l *Launcher) Start(cmd *exec.Cmd, p sandbox.Policy) error {
	if err := sandbox.ValidatePolicy(p); err != nil {
		return err
	}
	p.WorkspaceRoot = sandbox.CanonicalPath(p.WorkspaceRoot)
	rs, err := l.ruleset(p)
	if err != nil {
		return err
	}
	var startErr error
	if err := landlockrun.OnRestrictedThread(rs.FD, func() error {
		if l.onThread != nil {
			l.onThread()
		}
		startErr = cmd.Start()
		return nil
	}); err != nil {
		return fmt.Errorf("inproc: %w", err)
	}
	return startErr
}

// Close closes every cached ruleset fd.
func (l *Launcher) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, rs := range l.rulesets {
		rs.Close()
		delete(l.rulesets, k)
	}
	return nil
}
