// Command attack is what a hostile recording's bash call runs against the
// replay that runs it. It first reports every descriptor above 2 it was
// started with (the run stage's response or request descriptor, inherited,
// would hand it the verdict). Then every process above it, up to PID 1 of its
// namespace (the run stage that produces the replay's result, PID 1 that
// passes it on), each of their threads, is attacked as a process of the
// same uid would: PTRACE_ATTACH and PTRACE_SEIZE, process_vm_readv and
// process_vm_writev, /proc/<pid>/mem opened for writing, every
// /proc/<pid>/fd/<n> opened for writing, /proc/<pid>/environ read. Each
// attempt prints one line, "attack <pid>[/<tid>] <what>: blocked (<error>)"
// or "attack <pid>[/<tid>] <what>: REACHED", and the last line is
// "attack-done <n> targets": a replay whose results lack it did not run
// the attack. A process_vm_* call that gets as far as the address (EFAULT:
// the address is one no process maps) was allowed: REACHED.
//
// With -signal STOP or -signal KILL it instead sends that signal to the
// run stage (the process just below PID 1), as a recording's command may
// (same uid): the replay must end in an error, never a match, and soon.
//
// Test tooling, built by the tests that make the hostile recordings
// (package harness/replay/hostile); it imports the standard library and
// golang.org/x/sys/unix only.
package main
