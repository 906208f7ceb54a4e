// Package isolate runs a registered function in a child process that is
// contained: the host's filesystem is read-only there, its /tmp is a bounded
// tmpfs of its own, it has a /dev, a /proc and a network namespace of its
// own, and nothing it starts outlives it. Fixed paths under /tmp (upstream's
// spill roots /tmp/dsh-acp-snap-<hash>, a recording's /tmp/dsh-escalated.txt)
// therefore exist once per run: any number of users and concurrent runs never
// meet there, nothing is left in the host's /tmp afterwards, and what the
// function runs (a recording's hooks and commands) cannot write the host.
//
// # How
//
// [Run] re-executes the running binary (/proc/self/exe) in new mount, PID and
// network namespaces. Root (or any process holding CAP_SYS_ADMIN) gets them
// directly; anyone else gets them inside a new user namespace that maps only
// its own uid and gid, with CAP_SYS_ADMIN and CAP_NET_ADMIN as ambient
// capabilities. That child, PID 1 of the namespace (the setup stage):
//
//  1. makes every mount private (nothing propagates back to the host);
//  2. makes every mount of the host read-only, nosuid and nodev
//     (mount_setattr, recursively);
//  3. mounts a tmpfs of [Options.TmpSize] bytes (mode 1777) on /tmp and binds
//     the shared paths read-only into it at their own paths;
//  4. mounts a read-only tmpfs on /dev holding null, zero, full, random,
//     urandom and tty bound from the host's (the only mounts where a device
//     node can be opened) and the fd, stdin, stdout and stderr links;
//  5. mounts its PID namespace's own /proc (a pid read from the host's /proc
//     would name a host process: a bwrap with --unshare-pid started in the
//     child opened the namespaces of whatever host process had its child's
//     pid, and failed);
//  6. brings up loopback, the only interface of the fresh network namespace
//     (a child run with [Options.HostNetwork], dsh-record's, which reaches
//     its live model, keeps the host's network namespace instead);
//  7. starts the run stage in a user and mount namespace of its own, which
//     locks every mount above (a namespace owned by a less privileged user
//     namespace can neither remount, unmount nor reveal what it was given);
//     anyone but root keeps its own uid there, and root's run stage is root
//     of that namespace but the host's nobody (the host's root is nobody
//     there, every other id itself: a host uid 0 passes procfs's checks in
//     any namespace and could write the kernel's sysctls);
//  8. makes itself undumpable, drops every capability, forwards SIGTERM and
//     SIGINT to the run stage, reaps orphans and exits with the run stage's
//     status.
//
// The run stage checks the containment (/tmp a tmpfs on another device than
// the host's, / read-only, a network namespace other than the host's), sets
// TMPDIR=/tmp, reads the request from stdin, runs the function registered
// with [Serve] under that name and writes its response to descriptor 3, of
// which Run reads at most [Options.MaxResponse] bytes.
//
// When PID 1 exits, for whatever reason, the kernel kills every process left
// in the namespace, and the tmpfs goes with the last of them. The child also
// dies with its parent (PDEATHSIG), and cancelling Run's context sends it
// SIGTERM, which cancels the function's context.
//
// Inside, bwrap and the Landlock runner still confine commands: they get
// what they need from the child's /dev and /proc.
//
// Where the namespaces cannot be created (user namespaces disabled, a seccomp
// profile, a mount refused, root without CAP_SYS_ADMIN), Run fails with one
// error that says so and nothing runs: there is no fallback to the host.
// [Available] probes once per process; [EnvUnavailable] makes it fail, to try
// what a caller does then.
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
// The standard library, golang.org/x/sys/unix and sandbox/procfs (the probe
// reads its own status).
package isolate
