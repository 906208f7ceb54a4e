// Package execstop starts a command stopped before its first instruction,
// acts on it there, and only then lets it run.
//
// # How
//
// [Start] starts the command with ptrace's PTRACE_TRACEME, which the child
// calls right before execve: the kernel then stops it with SIGTRAP once the
// new program is loaded, before any of its instructions has run. The thread
// that called Start is its tracer. Start waits for that stop, hands the
// stopped child to a function ([Stopped]), and detaches, dropping the
// SIGTRAP. If the stop does not come, or the function fails, the child is
// killed before it ran anything and reaped, and Start returns the error:
// nothing runs that was not acted on.
//
// What a function can do to a stopped child:
//
//   - [Stopped.RestrictSelf] makes the child enforce a Landlock ruleset it
//     holds as an inherited descriptor, then close it. The child runs the
//     two system calls itself: a short sequence of instructions is written
//     over its entry point, the registers set to call them, the child let
//     run to a breakpoint at the end, and its memory and registers put
//     back. Its result is read from the registers. Only on amd64; elsewhere
//     it fails (so the caller fails closed).
//   - [Stopped.Limit] and [Stopped.Limits] set resource limits of the child
//     (prlimit), before it could fork anything that would escape them.
//
// # Threads
//
// ptrace requests are accepted from the tracer thread only, so Start must
// be called from a goroutine locked to its OS thread (runtime.LockOSThread)
// that stays locked until Start returns. Only the tracer's thread group
// learns of a traced child's stops; nothing else in this process may wait
// for children it did not start (a wait for any child would take the stop).
//
// # Imports
//
// The standard library, sandbox (the limits' type) and
// sandbox/internal/llsys (the system calls).
package execstop
