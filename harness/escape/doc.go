// Package escape is the sandbox escape corpus: small shell scripts that try
// to write outside the workspace under workspace-write (and to write at all
// under read-only), run under every backend of this machine, and checked from
// the host afterwards.
//
// # Attempts
//
// Each attempt is attempts/<name>.sh, run as `bash -c <script>` inside the
// confined command with WS (the workspace), OUT (a directory outside it),
// TARGET ($OUT/target, "original\n", mode 0644, mtime 2001-01-01) and PROBE
// (escape-probe, for syscall-exact operations) in its environment. Leading
// comment lines are the header:
//
//	# attack: what it tries (required)
//	# class: path | truncate | ioctl | metadata | device | caller-fd | inode | temp
//	# needs: root prelink holder cloexec-fd leaked-fd tmp-workspace shm loopdev
//	# settle: 1500ms   (wait before checking, for attempts that leave a child)
//
// A bad header is an error naming the file, line and field.
//
// An attempt may also be attempts/<name>.ts: a run_code program (header
// lines start "// "), run by run_code's Node runtime (tools/code/noderuntime)
// confined by the backend exactly as run_code confines it (the unprivileged
// identity starts the runner through setpriv); $WS, $OUT and $TARGET in its
// text are the paths. Its exit is 0 when the program completed, 1 when it
// failed (the failure is its stderr). The capped-ABI table leaves them out.
//
// # Checking
//
// Every run gets a fresh run directory under a base outside /tmp (bwrap
// mounts a fresh tmpfs on /tmp; Landlock grants the host /tmp wholesale), for
// example /var/tmp/dshsim-escape-*. Before and after the run the host takes
// a [Snapshot] of the run directory (without the workspace under
// workspace-write, with it under read-only) and of any fixture paths (a
// /dev/shm directory), recording kind, content hash, mode, owner, mtime,
// symlink target, device number and user xattrs, and [Diff]s them. Fixtures
// (a holder process, loop devices, descriptors) are stopped before the second
// snapshot. No change is [Blocked]; a change is [GotThrough].
//
// # Admission
//
// A got-through is admitted only by what the backend reported ([Admit], a
// pure function): a partial Landlock report (the probe's words or the
// runner's stderr notice) admits truncate before ABI 3 and device ioctl
// before ABI 5; a metadata change (class metadata, header "# effect:") is
// admitted only when the backend's own Ungoverned list
// (sandbox.ConfinedArgv.Ungoverned) names that effect; the host /tmp is
// Landlock's temp area under workspace-write
// (spec §8.5); devices are not promised by any mode (spec §1.1); a
// descriptor the caller opened and passed, and an inode linked outside before
// the call, are outside path confinement. Anything else is NOT ADMITTED and
// fails TestCorpusNoUnadmittedEscape.
//
// # Backends and identities
//
// [Bwrap] and [Landlock] are the real sandbox.Provider restricted to one
// backend (Landlock selected by probing the runner, as on a host without
// bwrap); [LandlockCapped] runs the runner with --abi-cap N. Running as root,
// every attempt runs as root and as uid 65534 (the run directory is chowned
// to it), because the two differ: bwrap run by root keeps every capability
// unless told otherwise, and before the profile gained --cap-drop ALL the
// corpus saw root commands remount / read-write (remount-rw) and open an
// outside file by handle through the workspace mount (open-by-handle).
//
// # Golden files
//
// snapshots/escape.txt (attempt × backend/identity/mode) and
// snapshots/escape-abi.txt (the corpus under ABI caps 1..7); DSHSIM_UPDATE=1
// rewrites them. A non-root run compares against *-nonroot.txt instead.
//
// # Imports
//
// Test tooling: it imports the sandbox it attacks (sandbox) and may import
// any product package; no product package imports it.
package escape
