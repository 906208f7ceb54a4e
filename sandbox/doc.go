// Package sandbox holds the per-call process sandbox: the three modes and
// what they promise, the per-call [Policy] and its one check ([Validate]),
// the profile builders of every platform, the [Provider] that picks a
// backend and wraps argv, the failure classification every executor uses,
// and the [Report] of a confined run.
//
// # Modes and promises
//
// Only file writes are governed. [ReadOnly] allows no writes (POSIX backends
// keep the /dev/null sink); [WorkspaceWrite] allows writes beneath the
// workspace root and a backend-defined temp area; [DangerFullAccess] is no
// confinement at all and never reaches a provider: the consumer runs the
// command itself. Reads, network, process visibility, devices and credentials
// are not promised by any mode. [Full] enforcement governs every write the
// mode promises; [Partial] only a subset (Landlock below ABI 5, the Windows
// ACL runner).
//
// # Profiles
//
// The builders are pure functions: [BwrapArgs], [LandlockArgs] (the runner
// flags of [LandlockGrants]), [SeatbeltProfile] / [SeatbeltArgs] and
// [WindowsACLArgs]; [Wrap] joins runner, profile, "--" and the caller's exact
// argv. Temp semantics differ per backend: bwrap mounts a fresh tmpfs at /tmp
// (writes vanish), Landlock grants the host /tmp wholesale, Seatbelt grants
// the workspace, /tmp and the process temp dir, canonicalised. What every
// platform's builder emits is golden in the sandbox sim
// (snapshots/txt/profiles.txt).
//
// # Provider
//
//	p, err := sandbox.NewProvider(sandbox.Config{})           // this platform
//	wrapped, err := p.Confine(ctx, []string{"bash", "-c", cmd}, policy)
//	// spawn wrapped.Argv directly; classify with wrapped's facts
//
// The chain per platform is linux bwrap then Landlock, darwin Seatbelt,
// windows the ACL runner, anything else empty ([Chain]). Selection is lazy and
// cached for the provider's lifetime, "unavailable" included: an empty chain
// is unavailable without probing; a sole candidate is selected without
// probing; otherwise candidates are probed in order and the first usable one
// wins (Landlock is probed only when bwrap fails). Probes are real short
// processes bounded by Config.ProbeTimeoutMs, injectable through
// [Config.Probes]. Config.RunnerCommand replaces the chain with a trusted
// operator runner given bwrap's profile.
//
// Confine never passes argv through unconfined: it returns enforcing argv, a
// [*UnavailableError] (code SANDBOX_UNAVAILABLE, VERBATIM message) when no
// backend is usable, or a bad-input error wrapping [ErrBadInput] from
// [Validate] (an unknown mode, danger-full-access, a relative or missing
// workspace root, an empty argv, a workspace-write root redirected through a
// temp-area symlink, a workspace-write root that makes confinement
// meaningless: "/", a system tree, the home directory or above it, see
// [MeaninglessRoot]; a workspace-write root that holds a mount point or is,
// through a bind mount, such a directory, see [MountedRoot]). [Validate] is
// the one check of a call: every confiner (the provider, package
// sandbox/inproc) makes it, and returns the policy it granted in
// [ConfinedArgv.Policy]: the root canonicalised in one walk through
// descriptors, and, under workspace-write, the device and inode of the
// directory it reached ([Policy.WorkspaceID]), which every backend pins its
// grant to (see Grants are pinned).
// [NewProvider] rejects bad configuration (a zero or infinite
// probe timeout, inconsistent runnerCommand settings, a launcher or runner
// path that is a directory, an unknown backend name) with upstream's
// VERBATIM texts where they exist (VERBATIM, here and in every comment of
// the repository: upstream's text, byte for byte; docs/README.md, Words).
//
// # Grants are pinned
//
// A workspace-write grant lands on the directory [Validate] checked, never
// on whatever its name leads to when the backend applies it: a confined
// command can rename the workspace away and put a link at its name, swap
// the two atomically (renameat2 RENAME_EXCHANGE) or swap its parent, after
// the check and before the grant. Validate resolves the root through
// descriptors (openat2 RESOLVE_NO_SYMLINKS, or its walk that opens each
// component without following a link) and takes the device and inode of
// the directory it reached. Then, on every backend:
//
//   - bwrap binds that directory through the descriptor Validate opened,
//     not by path: --bind-fd 4 <root> ([BwrapArgs]), the descriptor being
//     [ConfinedArgv.Files], which the command inherits after the caller's
//     own with one number left closed ([ConfinedArgv.Inherit]; a start that
//     does not pass them fails in bwrap) and the starter closes after the
//     start ([ConfinedArgv.Close]; package sandbox/spawn does both). bwrap
//     0.8.0 reads the descriptor's path when it starts, mounts that path
//     once its namespaces are set up, and exits when the mount does not
//     show the descriptor's device and inode, so a call either runs with
//     the checked directory granted, wherever it now is, or does not run;
//     it closes the descriptors it bound before the command starts. Hardened, the workspace's .git is opened beneath that
//     descriptor without following a link and bound read-only the same way
//     (--ro-bind-fd 5); a .git that is a link is refused. bwrap's probe binds
//     a descriptor too ([BwrapProbeArgs]): a bwrap without --bind-fd is not
//     usable, and where it is the chain's only candidate a workspace-write
//     call fails as a runner failure (bwrap: Unknown option --bind-fd).
//     Nothing falls back to a bind by path. An operator runnerCommand is
//     given the same profile and descriptors.
//   - the Landlock runner opens every rule path with RESOLVE_NO_SYMLINKS and
//     refuses a root that opens as another directory than the one Validate
//     saw (--rw-inode <root> <dev>:<ino>, [LandlockArgs]).
//   - the in-process Landlock path (package sandbox/inproc) opens its rule
//     paths the same way and keys its rulesets by that device and inode.
//
// The tests that hold it: TestBwrapBindsTheCheckedDescriptors,
// TestHardenedBwrapRefusesALinkedGitDir and
// TestInheritNumbersAfterTheCallersFiles here; in package sandbox/spawn
// TestSwappedWorkspaceGrantsNothingOutside (a confined attacker races each
// swap against new calls until 2000 of them per confiner ran, a third per
// swap, 300 with -short,
// through the stack's default with bwrap, the Landlock runner, and the
// stack's default without bwrap: nothing lands outside),
// TestSwapAfterTheCheckGrantsNothingOutside (each swap made once between
// the check and the start, through spawn.Start),
// TestPinnedArgvWithoutItsFilesFails,
// TestBwrapWithoutDescriptorBindsFailsClosed,
// TestExtraFilesReachTheConfinedCommand and TestHardenedGitDirIsReadOnly.
//
// # The mount table between calls
//
// [Validate] judges a workspace-write root against this process's mount
// table (/proc/self/mountinfo, [MountedRoot]) on every call. Reading and
// parsing it was most of the check's cost, so on Linux the parsed table is
// kept between calls and read again only when it may have changed; the
// rule is judged afresh on every call. The kept table is served only when
// all of these hold, each checked on the call, under one lock that also
// spans the read and the keeping:
//
//  1. the process's mount namespace (the device and inode of
//     /proc/self/ns/mnt) is the one the descriptor was opened in, checked
//     before and after the open. Once it differs, nothing is kept again:
//     every later table is read afresh (a process that moves its main
//     thread between mount namespaces pays the read on every call);
//  2. the kept descriptor of /proc/self/mountinfo is still that file (its
//     device and inode), not a number some other code closed and reused;
//  3. poll on it reports no change. The kernel counts every change of a
//     namespace's mount table (a mount, bind, move, unmount, remount, or one
//     propagated from another namespace), before the call that makes it
//     returns; poll on an open mount table file reports POLLPRI (with
//     POLLERR) when the count differs from the one it last reported, or
//     from the one at the file's open, and records it. The watch polls
//     before it reads, so a change made before the poll is in the table
//     read after it, and a change made during or after the read moves the
//     count past the recorded one and is reported to the next call.
//
// Any failure of these checks (an error, POLLNVAL) reads the table afresh
// and keeps nothing; a read that fails refuses the call as before. So a
// call is judged against a table at least as new as the one a fresh read at
// its start would give: a mount made before the call began is always seen
// (a mount racing with the check races with a fresh read the same way).
// The tests mount after the table was kept (fifty rounds of mount and
// unmount), during its read, in a peer namespace whose mount propagates
// here, through a reused descriptor number and in a new namespace, each in a
// mount namespace of its own, and fail if the stale table is served.
//
// # Hardening (opt-in, ours)
//
// The opt-in hardening ([Config.Harden]; ours, beyond upstream, off by
// default) keeps a confined command away from the harness that started it,
// which no mode promises (see Modes and promises: process visibility and
// credentials are not governed). Upstream users reported a sandboxed agent killing its host
// process and reading credentials from its environment. With Harden:
//
//   - Landlock (the runner and the in-process path) scopes the domain (ABI 6,
//     landlock-run --scope): the command cannot signal a process outside it
//     nor connect to an abstract unix socket one listens on. Below ABI 6 the
//     call fails closed rather than run unscoped.
//   - bwrap already runs the command in its own PID namespace (it cannot see
//     the harness to signal it); hardened, the runner runs inside bwrap with
//     --scope and --rw / (no file rule of its own: bwrap's mounts govern
//     files), which scopes abstract unix sockets too (bwrap shares the host's
//     network namespace, where they live).
//   - every backend starts the command without the environment's secrets
//     ([ScrubSecrets], applied by package sandbox/spawn).
//   - under workspace-write bwrap binds the workspace's .git read-only,
//     through the descriptor of the .git opened beneath the workspace's
//     ([HardenedBwrapArgs]); Landlock cannot, and its report says so
//     ([HardenedUngoverned]: "git-dir" in Ungoverned).
//
// What a confinement keeps the command from is in [ConfinedArgv.Isolated]
// (bwrap's PID namespace is listed even without Harden); the escape corpus
// holds every backend to it.
//
// # Classifying an outcome
//
// Three outcomes, in precedence order:
//
//  1. Runner failure: the command never ran. A failed spawn is the runner's
//     only under [ConfinedArgv.StartError]'s conjunction (runner known,
//     workdir usable, ENOENT/EACCES on exactly the runner). After exit,
//     [ClassifyRunnerFailure] needs all three pieces of evidence: an allowed
//     exit code (Landlock: 125 only), a stderr line that is not an exact
//     informational line (the partial notice), and a fatal signature in that
//     line. The matched line is the detail of the [*UnavailableError].
//  2. Denial: [IsDenial], a non-zero exit whose stderr holds one of the active
//     backend's own denial signatures ([DialectOf]). The model then gets
//     [DenialMarker] and, when escalation is advertised, [EscalationHint].
//  3. Otherwise the command's own exit code, including 126/127 from a
//     launched child.
//
// [ConfinedArgv.Classify] applies this order after exit and returns the
// [Report] of the run: mode, backend, enforcement, what the backend cannot
// govern, denial, runner failure. Package sandbox/spawn runs a confined
// process and returns that report; package render turns it into the model's
// markers; package sandbox/inproc confines a child from a restricted locked
// thread of the calling Go process without a runner binary, and package
// sandbox/chain, the stack's confiner, makes that the Landlock backend's
// default (the runner its fallback, the reason in [Report.Fallback]).
//
// # Imports
//
// sandbox imports nothing of this repository but the leaf sandbox/procfs
// (the mount table Validate reads): not its other subpackages (spawn,
// inproc, landlock import it), not harness/... (test tooling), not the
// pipeline or the tools. The Landlock runner's probe lines it reads are its
// own constants, checked against the runner's by a test.
package sandbox
