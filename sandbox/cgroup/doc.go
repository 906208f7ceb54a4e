// Package cgroup bounds a call in a cgroup v2 of its own, where the host
// delegates a cgroup v2 subtree to this process.
//
// # Detection
//
// [Detect] is pure over the files it reads under a root directory (the
// host's "/", a fixture tree in a test): the process's own v2 cgroup (the
// "0::" line of /proc/self/cgroup), the cgroup2 mount holding it
// (/proc/self/mountinfo, its root and octal escapes understood), and, in
// the own cgroup's directory and then in its parent's (the usual
// delegation: a delegated cgroup whose processes live in a leaf below
// it), whether the [Required] controllers (memory, pids) are enabled in
// cgroup.subtree_control or may be (listed in cgroup.controllers, the file
// writable, and the cgroup holding no process unless it is the
// hierarchy's root: cgroup v2 enables controllers for the children of a
// cgroup without processes of its own only), and whether the caller may
// write the directory and its cgroup.procs. A required controller bound to
// a cgroup v1 hierarchy (a hybrid host), no cgroup2 mount, a v2 hierarchy
// never mounted (an empty /proc/self/cgroup) or any check failing is a
// [*NoDelegation] that says why: the caller then bounds its calls by
// resource limits.
//
// # A call's cgroup
//
// [Delegation.Prepare] enables the controllers still to enable, once.
// [Delegation.New] makes a fresh child cgroup ("dshsim-call-<pid>-<random>")
// for one call and writes its bounds: memory.max (and memory.swap.max 0
// where the kernel accounts swap), pids.max, and a watch of the cgroup's
// CPU time (cpu.stat's usage_usec, read every [Tick]) that kills every
// process in it at the bound. The bounds are the call's as a whole, every
// process it starts included; the file size has no cgroup bound and stays
// a resource limit (sandbox.Limits.GroupPart). The caller creates the
// call's first process in it (clone3's CLONE_INTO_CGROUP with
// [Group.FD], Go's syscall.SysProcAttr.UseCgroupFD), so the call runs no
// instruction outside it. [Group.Events] reads what stopped it
// (memory.events oom_kill, pids.events max, the CPU watch) for
// sandbox.Limits.GroupBound; [Group.Close] kills what is left
// (cgroup.kill, else each pid of cgroup.procs), waits for the cgroup to
// empty and removes it.
//
// A call's cgroup belongs to the caller's uid, as the delegated subtree
// does: a confined command cannot write it (no mode grants /sys/fs/cgroup),
// but an unconfined one, with the caller's uid, could change its bounds or
// move itself into another cgroup of the subtree.
//
// Package spawn detects once per process and bounds every call with
// limits this way when a delegation is found; a delegation whose call
// cgroup cannot be made (or whose controllers cannot be enabled) refuses
// the call: it never runs unbounded.
//
// # Tests
//
// The hosts this is developed and tested on are cgroup v1 hybrids: the
// detection is table-tested over fixture trees (and over the host, found
// to delegate nothing), and the cgroup path runs for real in a guest
// kernel under qemu with a delegated subtree (harness/kernels,
// TestCgroupBoundsInAGuest, running spawn's TestCgroupGuest there).
//
// # Imports
//
// The standard library, sandbox (the limits and the events' type) and
// sandbox/internal/llsys (the write-access check).
package cgroup
