// Package escape is the sandbox escape corpus: small shell scripts that try
// to write outside the workspace under workspace-write (and to write at all
// under read-only), or to reach the harness that started them, run under
// every backend of this machine, and checked from the host afterwards.
//
// # Attempts
//
// Each attempt is attempts/<name>.sh, run as `bash -c <script>` inside the
// confined command with WS (the workspace), OUT (a directory outside it),
// TARGET ($OUT/target, "original\n", mode 0644, mtime 2001-01-01, extended
// attribute user.dshsim="original") and PROBE (escape-probe, for
// syscall-exact operations) in its environment. Leading comment lines are
// the header:
//
//	# attack: what it tries (required)
//	# class: path | truncate | ioctl | metadata | device | inode | temp | isolation | late | git
//	# effect: chmod | chown | utimes | setxattr | chattr   (class metadata)
//	#         signal | abstract-unix | secret-env | agent  (class isolation)
//	# needs: root prelink holder cloexec-fd leaked-fd tmp-workspace shm loopdev sibling signal socket secret racer git-dir listener agent
//	# capability: CAP_MKNOD   (what it needs root for; exactly with "needs: root")
//	# settle: 1500ms   (wait before checking, for attempts that leave a child)
//
// A bad header is an error naming the file, line and field.
//
// An attempt may also be attempts/<name>.ts: a run_code program (header
// lines start "// "), run by run_code's Node runtime (tools/code/noderuntime)
// under the backend's confiner exactly as run_code runs it (through spawn,
// the channel on descriptor 3); $WS, $OUT and $TARGET in its text are the
// paths. Its exit is 0 when the program completed, 1 when it failed (the
// failure is its stderr). The capped-ABI and hardening tables leave them
// out.
//
// # Hostile recordings
//
// The corpus also holds the hostile recordings of package
// harness/replay/hostile, as attempts of class recording ([ClassRecording],
// [RecordingAttempts]): copies of upstream recordings (Config.Transcripts)
// whose hooks, bash calls, file tool calls, run_code programs and runner
// attack the host. Each is made against its run directory ($OUT, made
// writable by everyone, and $TARGET: a replay run by root is the host's
// nobody), $SHM, a TCP listener on the host's loopback (the listener
// fixture) and the run token as the mark of what it leaves behind, then
// replayed by dsh-replay's contained replay (harness/replay.Replay) in the
// one mode it runs its attack in ([Attempt.Mode]), between the snapshots. A
// change, a connection, a process left or a step the replay's results say
// got through is [GotThrough] and never admitted; nothing seen from an
// attack that did not run to its end (hostile.Case.Check) is
// [RunnerFailed]. They run in the table of the [Replayed] column only.
//
// # Running
//
// Every attempt runs through package sandbox/spawn, the executor every
// caller uses (new session, every inherited descriptor close-on-exec, the
// backend's confiner), never a bare exec.Command. [RunAll] runs a table's
// attempts eight at a time; an attempt whose fixture is process-wide (a
// descriptor without close-on-exec, the harness's SIGUSR1 trap) or global (a
// loop device) runs alone ([Attempt.Exclusive]).
//
// Class late is a change after the call returned, made by a process the
// call left behind; class git is a write beneath the workspace's .git,
// which workspace-write allows and the opt-in hardening keeps read-only
// where the backend can (these run in the hardening table only). The racer
// fixture gives the attempt $SWAP_WS, another call's workspace in /tmp, and
// $SWAP_TARGET, an outside directory, and starts new calls with that
// workspace writing $SWAP_TARGET/x while the attempt runs
// (workspace-swap-race swaps the workspace for a link to it).
//
// # Checking
//
// Every run gets a fresh run directory under a base outside /tmp (bwrap
// mounts a fresh tmpfs on /tmp; Landlock grants the host /tmp wholesale), for
// example /var/tmp/dshsim-escape-*. Before and after the run the host takes
// a [Snapshot] of the run directory (without the workspace under
// workspace-write, with it under read-only) and of any fixture paths (a
// /dev/shm directory), recording kind, content hash, mode, owner, mtime,
// symlink target, device number, inode flags (FS_IOC_GETFLAGS) and every
// extended attribute with its value (user.*, and trusted.* and security.*,
// which only root can list), and [Diff]s them. A path the snapshot cannot
// read is an error that fails the run, never "no change". Fixtures (a
// holder process, a sibling sandbox, loop devices, descriptors, the
// harness's socket) are stopped before the second snapshot. The harness also
// records what reached it: a SIGUSR1 it trapped, a connection to its
// abstract socket or to its listener on the loopback, its secret in the
// command's output, a canary in its own memory overwritten or printed and a
// pipe it holds written (the agent attempts: the harness stands in for the
// agent that started the command, whose threads they trace, whose memory
// they read and write, whose descriptors they reopen), and any process the
// command started still running once the call returned (every process of
// the attempt inherits a run token in its environment, found through
// /proc: nothing a call starts may outlive it; the process is killed). No
// change is [Blocked]; a change is [GotThrough].
//
// The late attempts also run unconfined ([Unconfined]), in
// danger-full-access as an escalated call runs them: the snapshots are then
// taken after the call returned, so only what changed once the call was
// over counts (during the call the command may write anywhere).
//
// # Admission
//
// A got-through is admitted only by what the backend reported ([Admit], a
// pure function): a partial Landlock report (the probe's words or the
// runner's stderr notice) admits truncate before ABI 3 and device ioctl
// before ABI 5; a metadata change is admitted only when the backend's own
// Ungoverned list (sandbox.ConfinedArgv.Ungoverned) names that effect; an
// isolation effect is admitted (no mode promises it) unless the backend's
// Isolated list (sandbox.ConfinedArgv.Isolated) claims it; the host /tmp is
// Landlock's temp area under workspace-write; devices are not promised by
// any mode (package sandbox, Modes and promises); an inode linked outside
// before the call is outside path confinement; a write beneath .git under the hardening
// only by the backend's Ungoverned entry "git-dir"; a late change never.
// The admission reads the run's own report when it has one (its mode's
// Ungoverned list). Anything else is NOT ADMITTED and fails
// TestCorpusNoUnadmittedEscape.
//
// # Backends and identities
//
// [NewBackend] builds a column by name: bwrap and landlock are the real
// sandbox.Provider restricted to one backend (Landlock selected by probing
// the runner, as on a host without bwrap), landlock-inproc the stack's
// default Landlock path (package sandbox/chain on a host without bwrap: the
// in-process launcher of package sandbox/inproc, threads reused per policy),
// landlock@abiN the real provider with
// the runner capped at ABI N (sandbox.Config.LandlockABICap, --abi-cap N),
// a "+harden" suffix turns the opt-in hardening on, unconfined
// ([Unconfined]) confines nothing and runs in danger-full-access, and
// dsh-replay ([Replayed]) is the contained replay of the hostile
// recordings. Run by
// root, the corpus runs as root in this process and, at the same time, as
// uid 65534 in an agent process of that uid ([RunAs], [AgentMain]: the test
// binary run again), so the unprivileged user's commands have an
// unprivileged harness as their parent, exactly as when a user runs the
// tests. Run by anyone else, it runs as that user only.
//
// # Golden files
//
// snapshots/escape.txt (attempt × backend/mode per identity, then the
// late attempts unconfined, then the isolation and .git attempts with the
// hardening on, then the hostile recordings replayed) and
// snapshots/escape-abi.txt
// (the corpus under ABI caps 1..5, as the unprivileged user); DSHSIM_UPDATE=1
// rewrites them (as root). Each identity's rows are a section
// ([SectionPrefix]); a run that is not root compares the golden without the
// root sections ([DropIdentity]), which need root to produce.
//
// # Imports
//
// Test tooling: it imports what it attacks (sandbox, sandbox/spawn,
// sandbox/inproc, harness/replay with its hostile recordings) and may import
// any product package; no product package imports it, nor does anything
// under harness/replay.
package escape
