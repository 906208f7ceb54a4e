// Package spawn is the sandboxed executor: it confines a command through a
// provider, spawns the wrapped argv directly in its own session and process group,
// captures its output, and classifies the outcome (runner failure, then
// denial, then the command's own exit).
//
// # Starting and waiting
//
//	p, err := spawn.Start(ctx, spawn.Request{
//		Argv:     []string{"bash", "-c", cmd},
//		Policy:   sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws},
//		Confiner: provider, // *sandbox.Provider
//	})
//	if err != nil { ... }   // nothing ran: Confine error, or runner spawn failure
//	res, err := p.Wait()    // err: *sandbox.UnavailableError when the runner failed
//	text := render.Result(res.Foreground(0), escalationAdvertised)
//
// danger-full-access bypasses the confiner: argv runs as given and the facts
// are {danger-full-access, denied: false}. Any other mode asks
// Request.Confiner per call (never cached here), so concurrent processes keep
// their own mode, enforcement and dialect.
//
// Request.InProcess (a *inproc.Launcher) confines in-process instead: argv
// runs as given from a restricted thread of this process (backend
// "landlock-inproc", Landlock's dialect, no runner to fail), about as fast as
// an unconfined spawn.
//
// Start returns a [Process]: [Process.Done] is closed when it settled,
// [Process.Wait] returns the [Result], [Process.OutputSoFar] reads the
// captured streams at any time, and [Process.Kill] terminates the group
// (SIGTERM, then SIGKILL after Request.Grace). Cancelling Start's context
// kills the group too, and so does Request.Timeout (Result.TimedOut). To keep
// a process running past a foreground wait (promotion to a background job),
// leave Timeout zero, wait on Done with your own timer, and pass a context
// that outlives the call.
//
// # Output
//
// Each stream keeps a bounded tail in memory (Request.TailBytes, default
// 64000 bytes). Once a stream outgrows it, the complete stream is also
// written to a private 0600 file under Request.OutputDir ([Stream.FullPath]),
// and [Stream.Truncated] is set; the tail never starts inside a UTF-8
// sequence.
//
// # Classification
//
// In precedence order (sandbox package, spec §5):
//
//  1. A start failure attributed to the runner (sandbox.IsRunnerSpawnFailure)
//     makes Start return *sandbox.UnavailableError{Mode, Detail: "Error:
//     spawn <runner> ENOENT"}; other start errors come back unchanged.
//  2. After exit, sandbox.ClassifyRunnerFailure over the retained stderr with
//     the wrap's rules: Wait returns *sandbox.UnavailableError{Mode, Detail:
//     <matched line>} and the Result has Sandbox.RunnerFailed (denied false).
//  3. Else sandbox.IsDenial with the wrap's own denial signatures sets
//     Sandbox.Denied.
//  4. Else the exit code alone (126/127 from a launched child included).
//
// A signal-killed process is never a denial nor a runner failure.
package spawn
