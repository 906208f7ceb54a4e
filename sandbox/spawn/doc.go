// Package spawn is the sandboxed executor: it confines a command through one
// [Confiner], starts it in its own session and process group, captures its
// output, and returns the facts of the run as a sandbox.Report (runner
// failure, then denial, then the command's own exit).
//
// # Starting and waiting
//
//	p, err := spawn.Start(ctx, spawn.Request{
//		Argv:     []string{"bash", "-c", cmd},
//		Policy:   sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws},
//		Confiner: c, // *chain.Confiner (the stack's), *sandbox.Provider, *inproc.Launcher
//	})
//	if err != nil { ... }   // nothing ran: Confine error, or runner spawn failure
//	res, err := p.Wait()    // err: *sandbox.UnavailableError when the runner failed
//	report := res.Sandbox   // *sandbox.Report: backend, enforcement, denial, ...
//
// danger-full-access bypasses the confiner: argv runs as given and the
// result has no report (nil). Any other mode asks Request.Confiner per call
// (never cached here), so concurrent processes keep their own mode,
// enforcement and dialect. [Confiner] is the one way a confined mode reaches
// a process: *sandbox.Provider returns argv wrapped by a runner;
// *inproc.Launcher returns argv as given with a Start that starts it from a
// restricted thread of this process (backend "landlock-inproc", Landlock's
// dialect, no runner to fail), about as fast as an unconfined spawn;
// *chain.Confiner, the stack's, is the provider's chain with the latter as
// its Landlock backend. Either
// checks the call with sandbox.Validate; spawn checks what comes back: the
// promised shape, the mode asked for, a workdir the bwrap profile does not
// hide.
//
// When the confiner asks for it (sandbox.ConfinedArgv.ScrubSecrets, the
// opt-in hardening), the command starts without the secrets of its
// environment (Request.Env, or this process's): sandbox.ScrubSecrets.
//
// Start returns a [Process]: [Process.Done] is closed when it settled,
// [Process.Wait] returns the [Result], [Process.OutputSoFar] reads the
// captured streams at any time, and [Process.Kill] terminates the group
// (SIGTERM, then SIGKILL after Request.Grace). Cancelling Start's context
// kills the group too, and so does Request.Timeout (Result.TimedOut). To keep
// a process running past a foreground wait (promotion to a background job),
// leave Timeout zero, wait on Done with your own timer, and set
// Request.Detach: the call's context then only reaches the confiner.
//
// # Nothing outlives its call
//
// Every process a call starts ends with the call (a foreground run), with
// its job (a process kept past a foreground wait) or with the session, on
// every backend and unconfined (an escalated danger-full-access call's grant
// ends with the call), for root and for a normal user alike. On its first
// start, spawn makes this process the child subreaper of its descendants
// (PR_SET_CHILD_SUBREAPER, process-wide; it needs no privilege, and a
// failure refuses every start): a process whose parent exits is re-parented
// here, never to PID 1. Each call's root starts in a session of its own,
// whose id is the root's pid. When a root exits, before its result is out
// (its uncollected zombie holds its pid, so the session id cannot be
// reused), spawn kills every process still in that session, wherever it is,
// and every re-parented child no running call claims, and waits for them
// (bounded, repeating as their own children are re-parented in turn). A
// re-parented child is claimed by a running call when it is still in that
// call's session (a double fork). One in a session of its own whose parent
// is gone (a detached daemon: setsid, then its parent exits) cannot be told
// apart from any other call's: it is killed at once, by a sweep that runs
// every 250 ms while any call runs. A child some other code of this process
// started stays in this process's session and is never touched; code that
// starts a child in a session of its own, outside spawn, starts it through
// [Keep], or a sweep would kill it. bwrap's PID namespace already ends everything inside when the
// command ends. Off Linux there is no subreaper to make, and nothing is
// promised.
//
// A sweep reads every process's stat line on the machine, so one call that
// provably created nothing is not swept: the command held no capability and
// could gain none (sandbox.ConfinedArgv.NoCapabilities: the in-process
// Landlock path), the last pid this PID namespace handed out
// (/proc/loadavg) is still the root's once it exited, and no sweep is
// running and the last one ended finding nothing to kill. The kernel hands
// pids out in a cycle and moves the last one for every process or thread
// created in the namespace or one nested in it; the root's own pid, held by
// its zombie, cannot be handed out again; only a holder of
// CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN over the namespace could place a
// pid without moving it (clone3's set_tid, ns_last_pid). So such a call
// made no process: none in its session, none re-parented here at its exit.
// Any other process forking meanwhile on the machine makes the call sweep.
// An orphan of another call is left to the sweeps of the calls still
// running or to the next call's, as it would be had it been re-parented
// just after this call's sweep.
//
// # Bounds
//
// A call whose policy has limits (sandbox.Limits) is bounded one of two
// ways, chosen once per process. Where the host delegates a cgroup v2
// subtree to this process (package sandbox/cgroup detects it), the call
// runs in a cgroup of its own made for it: its first process is created
// there (clone3's CLONE_INTO_CGROUP), memory.max, pids.max and a watch of
// its CPU time bound the call as a whole, the file size stays a resource
// limit, and the result names the bound from the cgroup's events
// (sandbox.Limits.GroupBound: "the memory bound (N bytes of the call,
// cgroup memory.max)"); the cgroup is emptied and removed before the
// result is out. A delegation whose call cgroup cannot be made refuses the
// call: it never runs unbounded. Elsewhere (a cgroup v1 hybrid host, no
// delegation) the limits are resource limits set on the command while it
// is stopped before its first instruction, and the result names the one
// that stopped it (sandbox.Limits.Bound).
//
// # Output
//
// Each stream keeps a bounded tail in memory (Request.TailBytes, default
// 64000 bytes). Once a stream outgrows it, the complete stream is also
// written to a private 0600 file under Request.OutputDir ([Stream.FullPath],
// named by sandbox/outfile in upstream's shape),
// and [Stream.Truncated] is set; the tail never starts inside a UTF-8
// sequence.
//
// # Classification
//
// In precedence order (sandbox package; upstream's order):
//
//  1. A start failure attributed to the runner (sandbox.ConfinedArgv.StartError)
//     makes Start return *sandbox.UnavailableError{Mode, Detail: "Error:
//     spawn <runner> ENOENT"}; other start errors come back as *StartError
//     (Go's text; StartError.Node gives Node's "spawn <argv0> ENOENT").
//  2. After exit, the confiner's facts classify the run
//     (sandbox.ConfinedArgv.Classify): a runner failure makes Wait return
//     *sandbox.UnavailableError{Mode, Detail: <matched line>} and the
//     report says RunnerFailed (denied false); else a denial in the backend's
//     own dialect sets Denied; else the exit code is the command's own
//     (126/127 from a launched child included).
//
// A signal-killed process is never a denial nor a runner failure.
//
// # Imports
//
// spawn imports package sandbox (the report, the confined argv, the
// classification), sandbox/outfile (the full-output files' names),
// sandbox/cgroup (a call's cgroup) and sandbox/internal (execstop, seal) only;
// it must not import render (presentation reads the
// report, not the other way round), the confiners' packages, or harness/....
package spawn
