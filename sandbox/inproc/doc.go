// Package inproc confines a child process of the calling Go program without a
// runner binary: it restricts one locked OS thread per policy with Landlock
// and starts the children of that policy from it (fork/exec inherits the
// thread's Landlock domain), each in a nested domain of its own.
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
// The launcher keeps one restricted thread per policy, locked to a worker
// goroutine that serves every start for that policy (it is never returned
// to the scheduler; it dies on Close, or when more than eight are kept and
// it is the least recently used idle one), which saves a thread creation
// per start. The stack's default Landlock path (package sandbox/chain) is
// this launcher. BenchmarkSpawnRatios (package sandbox/chain) compares it
// with a bare spawn, the runners and bwrap.
//
// # Why the agent is out of reach
//
// A command shares nothing with this process but what a child process of
// another user would: it cannot trace any of its threads, read or write
// its memory, open its descriptors through /proc, or signal it.
//
//   - The command runs in a Landlock domain of its own. The restricted
//     thread that starts it is in the policy's domain, and a child inherits
//     its parent's domain at fork; Landlock lets a domain trace (and, with
//     the signal scope, signal) itself and the domains nested below it. So
//     the command is started stopped before its first instruction (package
//     execstop: PTRACE_TRACEME, then the stop the kernel makes after
//     execve), and there enforces one more layer on itself
//     (landlock.NewNestRuleset, handed to it as an inherited descriptor
//     that it closes): its domain is now below the thread's, which it can
//     therefore neither trace nor, from ABI 6, signal; nor any other thread
//     of this process (not in a domain at all), nor a command of another
//     call (each has a layer of its own). Landlock's check covers every
//     way in: ptrace attach and seize, process_vm_readv and
//     process_vm_writev, /proc/<pid>/mem and /proc/<pid>/task/<tid>/mem,
//     the descriptors under /proc/<pid>/task/<tid>/fd, pidfd_getfd. Should
//     the nesting fail, the command is killed before it ran.
//   - This process is not dumpable (New sets PR_SET_DUMPABLE to 0; only
//     [WhileDumpable] lifts it, for the moment of a start that needs it,
//     such as a child into a new user namespace): the same ptrace access checks then also require
//     CAP_SYS_PTRACE, which a confined command never holds (the thread
//     drops every capability, the bounding set included, before it is
//     restricted). Either protection alone stops the memory and descriptor
//     attacks; only the nested layer stops signals, and only from ABI 6
//     (before it, a command can signal this process as any process of the
//     same user can: the runner's commands too).
//
// TestACommandCannotReachTheAgent runs each attack from a confined command,
// read-only and workspace-write, as root and as uid 65534, with both
// protections, each taken away, and neither: every attack gets through
// only with both gone (signals: with the nested layer gone).
//
// # Threads and the process limit
//
// A Go program cannot survive a failed thread creation: the runtime
// aborts. The kernel refuses one when the user runs as many tasks as its
// RLIMIT_NPROC allows (root is not bound by it). So a restricted thread is
// made only while at least 16 of the user's slots are free (counted over
// /proc), else the call fails closed naming the limit and this process
// keeps running; and every command gets an RLIMIT_NPROC 16 below this
// process's, soft and hard, set while it is stopped before its first
// instruction, so that commands can never take those last slots.
// TestNoRoomForAThreadFailsTheCallClosed and
// TestCommandsKeepTheAgentsReserve hold both.
//
// # Why a reused thread is safe
//
// A thread restricted once is restricted for good: Landlock domains only
// stack (landlock_restrict_self can add a layer, never remove one), and the
// thread has dropped every capability and set no_new_privs, neither of which
// can be undone. So a thread may serve a call only if its restriction is
// exactly the call's:
//
//   - A reused thread is keyed by the whole policy as sandbox.Validate
//     granted it: the mode, the canonical workspace root and, under
//     workspace-write, the root's device and inode (keyOf). A thread
//     restricted for read-only never starts a workspace-write command (which
//     would be denied what it was granted), and a workspace-write thread
//     never starts a read-only command (which would write what it was
//     refused), nor one of another workspace. The launcher's own settings
//     (the ABI cap and the hardening's scoping) are fixed for its lifetime,
//     so they are the same for every thread it keeps.
//   - Nothing of a call stays on the thread. The thread runs only
//     cmd.Start: fork and exec, where everything a call sets (its
//     directory, environment, session, descriptors, credentials) is applied
//     in the child after the fork. The thread's own state (its credentials
//     with every capability dropped, no_new_privs, its Landlock domain) is
//     set once, before its first start, from the key's ruleset, and is the
//     same for every call it serves. It runs no other goroutine: it is
//     locked before the restriction and never unlocked.
//   - The grant lands on the directory that was checked. A workspace
//     swapped for another directory has another inode, so another key, and
//     its ruleset is built afresh through openat2 with the inode checked.
//     The cached ruleset holds its directory's inode (a Landlock rule keeps
//     a reference to it), so that inode number cannot name another
//     directory while the thread lives.
//
// TestReusedThreadServesOnlyItsPolicy plants the bug (one thread for two
// policies) and fails: it runs read-only, workspace-write and another
// workspace's calls interleaved on one launcher and checks each is held to
// its own policy, and that calls of one policy did share a thread.
// TestThreadKeyHoldsTheWorkspaceIdentity fails with the workspace's
// identity dropped from the key; TestEvictionIsLeastRecentlyUsed and
// TestBusyWorkerIsNeverEvicted pin the eviction's order and that a worker
// with a start in flight is never ended.
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
// ABI 5, exactly as the runner reports it, and the runner's partial notice
// ("landlock-run: partial enforcement (older Landlock ABI)") is written on
// the command's stderr before it starts, as the runner prints it, so a
// result reads the same on either path.
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
//	l, err := inproc.New()        // fails when the kernel has no Landlock; makes this process not dumpable
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
// path for Go callers that start the command themselves; the stack's
// confiner (package sandbox/chain) makes it the Landlock backend's default
// and keeps Provider.Confine (the runner) for the argv contract and as the
// fallback.
//
// # Imports
//
// inproc imports sandbox (policy, grants, dialect), sandbox/landlock (the
// mechanism), sandbox/internal/execstop (the stop before the first
// instruction), sandbox/internal/llsys and sandbox/procfs; it must not
// import sandbox/spawn or anything outside sandbox/.
package inproc
