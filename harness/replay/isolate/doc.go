// Package isolate runs a registered function in a child process that has a
// /tmp of its own, so that fixed paths under /tmp (upstream's spill roots
// /tmp/dsh-acp-snap-<hash>, a recording's /tmp/dsh-escalated.txt) exist once
// per run: any number of users and concurrent runs never meet there, and
// nothing is left in the host's /tmp afterwards.
//
// # How
//
// [Run] re-executes the running binary (/proc/self/exe) in new mount and PID
// namespaces. Root (or any process holding CAP_SYS_ADMIN) gets them directly;
// anyone else gets them inside a new user namespace that maps only its own uid
// and gid, with CAP_SYS_ADMIN as an ambient capability. The child then:
//
//  1. makes every mount private (nothing propagates back to the host),
//  2. mounts a fresh tmpfs (mode 1777) on /tmp and its PID namespace's own
//     /proc (a pid read from the host's /proc would name a host process: a
//     bwrap with --unshare-pid started in the child opened the namespaces of
//     whatever host process had its child's pid, and failed),
//  3. drops every capability it was given for that (ambient, inheritable,
//     permitted, effective) and re-executes itself, so that no thread of the
//     process that runs the function, and no command it starts, holds a
//     capability the user did not have,
//  4. checks that /tmp is a tmpfs on another device than the host's, sets
//     TMPDIR=/tmp, reads the request from stdin, runs the function registered
//     with [Serve] under that name and writes its response to descriptor 3.
//
// The child is PID 1 of its namespace: when it exits, for whatever reason, the
// kernel kills every process left in the namespace, and the tmpfs goes with the
// last of them. The child also dies with its parent (PDEATHSIG), and
// cancelling Run's context sends it SIGTERM, which cancels the function's
// context.
//
// Where the namespaces cannot be created (user namespaces disabled, a seccomp
// profile, a tmpfs mount refused), Run fails with one error that says so and
// nothing runs: there is no fallback to the shared /tmp. [Available] probes
// once per process.
//
// # Registering
//
// A package that runs work isolated calls [Serve] from its init function. In
// the re-executed child, Serve for the matching name never returns: it becomes
// the child. Every binary that links the package (commands, test binaries)
// therefore works as its own child, with no flag or argument of its own.
//
// # Imports
//
// Only the standard library and golang.org/x/sys/unix; nothing of this
// repository.
package isolate
