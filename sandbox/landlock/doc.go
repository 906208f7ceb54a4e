// Package landlock is the Landlock runner: it applies a Landlock allow-list
// to itself, then executes a command, which inherits the restriction across
// execve (and so do all its descendants; the invoking process is not
// confined). cmd/landlock-run is a thin entry around [InitMain] (called from
// an init function, see below); the scenario tests register [Main] as the
// landlock-run command. Both parse the command line into options ([Parse])
// and run them; any error is the one line "landlock-run: <error>", exit 125.
//
// # Command line
//
//	landlock-run [--abi-cap N] [--scope] [--ro <path>]... [--rw <path>]... [--rw-inode <path> <dev>:<ino>]... -- <argv>...
//	landlock-run --probe
//	landlock-run --abi
//
// --ro P grants read and execute beneath P; --rw P grants every right the ABI
// in use can govern beneath P except making character and block device nodes
// (ours, not upstream's: see [ReadWriteRights]). Everything else is denied.
// --rw-inode P D:I (ours) is --rw P pinned to the directory sandbox.Validate
// checked: P must open as device D, inode I (decimal, as fstat reports
// them), or the runner fails without running the command ("rule path
// changed since it was checked: ..."). Every rule path is opened without
// following a symlink at any component (openat2 with RESOLVE_NO_SYMLINKS):
// a path that is, or passes through, a link is a runner failure ("cannot
// open rule path: P: a component is a symbolic link ..."), never a grant of
// the link's target. So a confined command that swaps the workspace for a
// link to elsewhere, or for another directory, between the check and a
// later call's start cannot redirect that call's grant. There is no
// fallback that follows links: a kernel without openat2 (before 5.6; every
// Landlock kernel has it, unless a seccomp filter hides it) fails closed.
// Flags interleave
// freely; rules are installed all --ro first, then all --rw. "--" is
// mandatory and everything after it is executed with execvp semantics (PATH
// search, environment unchanged). The runner reads no environment variables.
//
// Usage errors (stderr, exit 125), VERBATIM:
//
//	landlock-run: usage error: --probe takes no other arguments
//	landlock-run: usage error: --ro requires a path        (or --rw)
//	landlock-run: usage error: unknown argument: <arg>
//	landlock-run: usage error: missing `-- <argv>...` command
//
// --scope (ours, the opt-in hardening of sandbox.Config.Harden) also scopes
// the domain (Landlock ABI 6): the command and its descendants cannot signal
// a process outside the domain (the harness that started them) nor connect
// to an abstract unix socket one listens on. Below ABI 6 (the kernel's, or
// the cap's) --scope is a runner failure: "--scope needs Landlock ABI 6
// (signal and abstract unix socket scoping); the ABI in use is N"; the
// command does not run without the scoping it asked for.
//
// # Exit status
//
// 125 for every runner-level failure (usage, no Landlock, a rule path that
// cannot be opened without following a link or is not the pinned directory,
// a ruleset/prctl/restrict error, exec failure); the command
// did not run, and exactly one stderr line starting "landlock-run: " says why.
// After a successful exec the command's status passes through unchanged,
// including 125, so a consumer needs both the status and a fatal line to
// conclude the runner failed.
//
// # Probe
//
// --probe (only as the sole argument) restricts a short-lived thread of its
// own with the maximal ruleset (--ro / only) and prints exactly one line,
// VERBATIM "landlock: fully enforced" or "landlock: partially enforced (older
// ABI)", then exits 0; 125 with a fatal line when Landlock is not enforced.
//
// # ABI handling
//
// The runner asks the kernel for its ABI; none at all is fatal ("landlock is
// not enforced by this kernel (ABI unsupported or disabled)": it never runs a
// command unconfined). It governs the rights of min(ABI, 5) ([MaxABI]; ABI 6
// and 7 add no filesystem rights). Below ABI 5 enforcement is partial: the
// runner prints [PartialNotice] on stderr and still runs the command. A rule
// path that is not a directory gets only the file-compatible rights (execute,
// write, read, truncate, ioctl), which is how --rw /dev/null works.
//
// # ABI cap (an addition for the kernel matrix)
//
// --abi-cap N makes the runner use no more than ABI N: it only narrows (a cap
// above the kernel's ABI changes nothing), and a capped run reports exactly
// as a kernel of that ABI would: partial notice below 5. The kernel then
// governs only the rights of ABI N, which is what an older kernel does for
// them. The cap is a flag, not an environment variable, because the runner
// takes no environment inputs. --abi (sole argument) prints the kernel's ABI
// as "landlock: kernel ABI <n>" and exits 0 (125 with the not-enforced line
// when there is none); --probe output stays exactly as specified.
//
// # Threads
//
// The restriction is applied with no_new_privs and landlock_restrict_self on
// one OS thread, without TSYNC; that thread then calls execve, which replaces
// the whole process and keeps the calling thread's Landlock domain. Nothing
// else in the process is restricted. The runner binary does this on its
// startup thread from an init function ([InitMain]: the runtime keeps the
// main goroutine locked there during initialisation, so no LockOSThread and
// no template thread); [Main] locks the calling goroutine's thread itself;
// --probe and [Run] use a throwaway thread ([OnRestrictedThread]).
//
// # Start-up time
//
// A runner run is Go's start-up, a few syscalls, and an exec from a Go
// process. The binary is built static and stripped (CGO_ENABLED=0, -trimpath,
// -ldflags "-s -w"; see sandboxtest.Build) and creates no thread of its own
// on the confined path. It allocates a few kilobytes, far below the first GC
// trigger, so no GC cycle runs and turning the GC off would change nothing.
// BenchmarkSpawnRatios (package sandbox/chain) measures it against an empty
// Go binary, a Go binary that only execs, and upstream's C runner.
//
// # Imports
//
// landlock imports the syscall layer sandbox/internal/llsys and nothing else
// of this module (not even package sandbox: the runner's start-up pays for
// what it imports; package sandbox keeps its own copy of the probe lines,
// checked against these by a test). Nothing outside sandbox/ but
// cmd/landlock-run and the tests imports it.
package landlock
