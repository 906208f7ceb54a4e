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
// # Threads and speed
//
// By default every start uses its own thread, which dies afterwards; two
// spare locked threads wait ahead so that creating the replacement is off
// the start's path. Options.ReuseThreads instead keeps one restricted thread
// per policy, locked to a worker goroutine for the launcher's lifetime
// (still never returned to the scheduler; it dies on Close), which saves the
// thread creation per start. BenchmarkSpawnRatios compares both with a bare
// spawn, the runner and bwrap.
//
// # Rules
//
// The rules are the Landlock runner's for the policy (sandbox.LandlockGrants:
// read-only /, writable /dev/null, plus /tmp and the workspace in
// workspace-write), built once per (mode, canonical root, the root's device
// and inode as sandbox.Validate saw them) and cached as an open ruleset fd
// for the launcher's lifetime. As in the runner, every rule path is opened
// without following a symlink and the workspace root must open as the
// directory Validate saw (landlock.Rules.Inodes), or nothing runs. Enforcement is partial below
// ABI 5, exactly as the runner reports it; no notice is printed.
// Options.ABICap narrows the ABI as landlock-run --abi-cap does (the kernel
// matrix runs the in-process path in its capped columns). The restricted
// thread drops every capability before the restriction, as the runner does,
// so the child holds none (landlock.DropCapabilities).
//
// # Report
//
// [Launcher.Confine] reports what the runner reports, under the backend name
// [Backend]: the mode, the enforcement, and Landlock's Ungoverned list
// (sandbox.DialectOf), so a caller sees the same admissions either way.
//
// # Use
//
//	l, err := inproc.New()        // fails when the kernel has no Landlock
//	cmd := exec.Command("bash", "-c", script)
//	err = l.Start(cmd, policy)    // then cmd.Wait() from any goroutine
//
// or, through the executor, as its confiner:
//
//	res, err := spawn.Run(ctx, spawn.Request{Argv: argv, Policy: policy, Confiner: l})
//
// Either way the call is checked once, by sandbox.Validate, as the provider
// checks it (a confined mode, an existing absolute root, not redirected
// through a temp-area symlink). [Launcher.Confine] returns argv as given with
// a Start that starts it from the restricted thread; a failure to restrict
// is then a *sandbox.UnavailableError and nothing runs. This is an extra
// path for Go callers, not a replacement for Provider.Confine.
//
// # Imports
//
// inproc imports sandbox (policy, grants, dialect) and sandbox/landlock (the
// mechanism); it must not import sandbox/spawn or anything outside sandbox/.
package inproc
