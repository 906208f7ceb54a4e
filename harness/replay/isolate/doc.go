// Package isolate runs a registered function in a child process that is
// contained: it sees the least of the host it needs (a root of its own
// holding the system directories read-only, a few /etc entries, what its
// caller shares, and nothing else), its /tmp is a bounded tmpfs of its own,
// it has a /dev, a /proc and a network namespace of its own, it holds no
// privilege, it is bounded in memory, processes, file sizes and CPU time,
// and nothing it starts outlives it. Fixed paths under /tmp (upstream's
// spill roots /tmp/dsh-acp-snap-<hash>, a recording's
// /tmp/dsh-escalated.txt) therefore exist once per run: any number of users
// and concurrent runs never meet there, nothing is left in the host's /tmp
// afterwards, and what the function runs (a recording's hooks and commands)
// can neither write the host nor read what the host does not hand it.
//
// # How
//
// [Run] re-executes the running binary (/proc/self/exe) in new mount, PID and
// network namespaces and a session of its own (no controlling terminal).
// Root (or any process holding CAP_SYS_ADMIN) gets them directly; anyone
// else gets them inside a new user namespace that maps only its own uid and
// gid, with CAP_SYS_ADMIN and CAP_NET_ADMIN as ambient capabilities. Its
// environment is an allowlist ([ChildEnv]: the locale, PATH, HOME, the Go
// runtime's settings, DSHSIM_*, what [Options.Env] names; never a name that
// counts as a secret). That child, PID 1 of the namespace (the setup stage):
//
//  1. makes every mount private (nothing propagates back to the host);
//  2. holds open what the child's root will hold of the host (the system
//     directories usr, bin, sbin, lib, lib32, lib64, libx32; the /etc
//     entries [EtcAllowed] keeps; the shared paths; six device nodes) and
//     reads passwd and group;
//  3. builds the root on a small tmpfs: the system directories bound
//     read-only, nosuid and nodev (recursively), or recreated as the
//     symlinks they are on a merged-/usr host; an empty /opt; an /etc of
//     the kept entries bound the same way and a passwd and group made of
//     the host's lines for root, nobody and the run's own ids only; a tmpfs
//     of [Options.TmpSize] bytes (mode 1777) on /tmp; a read-only /dev
//     holding null, zero, full, random, urandom and tty bound from the
//     host's (the only mounts where a device node can be opened) and the fd,
//     stdin, stdout and stderr links; its PID namespace's own /proc (a pid
//     read from the host's /proc would name a host process); each shared
//     path bound read-only at its own path;
//  4. makes the root's tmpfs read-only, pivots into it and detaches the
//     host's tree: nothing else of the host (/home, /root, /run, /var,
//     the host's /tmp, /etc's secrets, any socket or FIFO there) is
//     reachable by any path;
//  5. brings up loopback, the only interface of the fresh network namespace
//     (a child run with [Options.HostNetwork] keeps the host's network
//     namespace instead);
//  6. starts the run stage in a user and mount namespace of its own, which
//     locks every mount above (a namespace owned by a less privileged user
//     namespace can neither remount, unmount nor reveal what it was given);
//     it maps one uid and one gid, each to itself: the caller's own, or
//     nobody's (65534) for root, so no host file of any other owner is
//     under any capability of the run; root's supplementary groups are
//     dropped (an unprivileged caller's cannot be: the kernel denies
//     setgroups in its user namespaces, so they stay, and the root holds
//     nothing that grants them more than others get);
//  7. makes itself undumpable, drops its capabilities, forwards SIGTERM and
//     SIGINT to the run stage, kills the run stage if anything stops it,
//     reaps orphans, and answers the host: the run stage's answer when it
//     ran to its end, else an error saying how it ended (killed, stopped,
//     past which bound).
//
// The run stage is two programs. The first, with CAP_SETPCAP (ambient) and
// nothing else, sets the run's resource limits ([Bounds]), empties the
// capability bounding set, locks the securebits, clears every capability
// set, sets no_new_privs and executes itself again: capabilities are per
// thread, and only an exec leaves none on any thread of the Go runtime.
// The second, the serve stage, makes itself undumpable (so nothing it
// starts, though it has its uid, can trace it, read or write its memory or
// open its descriptors through /proc), marks every descriptor it holds
// close-on-exec (the request, the response, the caller's socket and its
// output are its own, never a command's), checks the containment (/tmp a
// tmpfs on another device than the host's, / read-only, a network
// namespace other than the host's, no capability in any set, no_new_privs,
// not dumpable, no supplementary group when root ran it), sets TMPDIR=/tmp,
// reads the request from stdin, runs the function registered with [Serve]
// under that name and writes its response to descriptor 3, to PID 1, which
// passes it on; Run reads at most [Options.MaxResponse] bytes of it.
//
// When PID 1 exits, for whatever reason, the kernel kills every process left
// in the namespace, and the tmpfs goes with the last of them. The child also
// dies with its parent (PDEATHSIG), and cancelling Run's context sends it
// SIGTERM, which cancels the function's context.
//
// Inside, bwrap and the Landlock runner still confine commands: they get
// what they need from the child's /dev and /proc.
//
// # Bounds
//
// [Bounds] are resource limits the run stage sets on itself and everything
// it starts inherits: the data each process maps (RLIMIT_DATA), the processes and
// threads of the whole run (RLIMIT_NPROC, which the kernel counts per user
// in each user namespace: the run stage's namespace is the run's own), the
// size of each file (RLIMIT_FSIZE) and the CPU time of each process
// (RLIMIT_CPU). A run stage stopped by one is an error naming it ("it
// reached its memory bound 2 GiB per process"); a command past one fails
// as the kernel makes it fail (ENOMEM, EAGAIN, SIGXFSZ, SIGXCPU) while the
// run goes on.
//
// Where the host delegates a cgroup v2 subtree to the caller (package
// sandbox/cgroup), the child is also created in a cgroup of its own made
// for the run (clone3's CLONE_INTO_CGROUP), whose memory.max and pids.max
// are the memory and process bounds of the whole run; it is emptied and
// removed when the run ends. A failed run whose cgroup killed a process
// past memory.max or refused one past pids.max says so ("the run's cgroup
// stopped a process of it at its memory bound 2 GiB of the whole run
// (cgroup memory.max)"). A delegation whose run cgroup cannot be made
// refuses the run: it never runs unbounded. The CPU time and the file
// size stay per process. The hosts this is developed on are cgroup v1
// hybrids and delegate none; the cgroup path is tested in a guest kernel
// under qemu (harness/kernels, TestCgroupBoundsInAGuest).
//
// # Unavailable
//
// Where the namespaces cannot be created (user namespaces disabled, a
// seccomp profile, a mount refused, root without CAP_SYS_ADMIN), Run fails
// with one error that says so and nothing runs: there is no fallback to the
// host. [Available] probes once per process; [EnvUnavailable] makes it fail,
// to try what a caller does then.
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
// The standard library, golang.org/x/sys/unix, sandbox (which environment
// names are secrets, the limits of a run's cgroup), sandbox/cgroup (the
// run's cgroup), sandbox/procfs (the probe reads its own status, PID 1
// the run stage's) and harness/cmdline (the bounds' flags).
package isolate
