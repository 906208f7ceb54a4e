// Package chain is the confiner a deployment uses: the platform's backend
// chain ([sandbox.Provider]: bwrap, then Landlock on Linux) with the Landlock
// backend applied in this process by default ([inproc.Launcher], a thread
// restricted per policy and reused, see package sandbox/inproc) and the
// Landlock runner (landlock-run) as its fallback. The stack confines bash,
// background jobs and run_code's Node child with it, through package
// sandbox/spawn.
//
// # Why in-process by default
//
// A confined call through the runner pays a Go program's start-up (an empty
// Go exec alone is 2.7-3x a bare spawn on the project's machine), so on the
// hosts where Landlock matters (no usable bwrap) a call through the runner
// waited nearly three times as long as one through upstream's C runner. The
// in-process path applies the same rules from a locked thread of this
// process and starts the command from it: no runner program at all
// (docs/benchmarks.md measures both against upstream's C runner).
//
// # The same as the runner
//
// The in-process path builds the runner's rules for the policy
// (sandbox.LandlockGrants, rule paths opened without following links, the
// workspace pinned to the inode sandbox.Validate saw), handles the ABI as
// the runner does (the rights of min(ABI, cap, 5), partial below 5, with
// the runner's partial notice written on the command's stderr, byte for
// byte), drops every capability, sets no_new_privs, scopes the domain when
// hardened, and reports Landlock's dialect and Ungoverned list. Its report's
// backend is [inproc.Backend] ("landlock-inproc"); the runner's is
// "landlock". Nothing that outlives a call is changed: package sandbox/spawn
// starts, reaps and sweeps the command as it does under any backend.
//
// # When the runner runs instead
//
// The provider selects the backend as it does without this package, except
// that the Landlock candidate's probe asks the in-process path first
// (sandbox.Config.LandlockInProcess): Landlock is usable when this process
// can restrict a thread, whether or not the runner binary exists. The runner
// confines a Landlock call, with the reason in the report
// (sandbox.ConfinedArgv.Fallback, sandbox.Report.Fallback,
// sandbox.Facts.Fallback: the session log's data.sandbox.fallback), when:
//
//   - the configuration asks for it ([Config.Runner]: [RunnerConfigured]);
//   - this process cannot apply Landlock itself: the launcher cannot be
//     made (the kernel reports no Landlock ABI to this process; the
//     hardening asked for scoping below ABI 6) or a throwaway thread cannot
//     be restricted (a seccomp filter that denies landlock_restrict_self or
//     prctl to this process). The runner then decides: on a kernel without
//     Landlock, or below ABI 6 when hardened, it fails closed as it always
//     did, and nothing runs unconfined.
//
// A caller of the argv contract (a command it starts itself, not through
// spawn: the lsp servers) gets the runner through [Confiner.Provider], as
// before.
//
// # Imports
//
// chain imports sandbox and sandbox/inproc only; it must not import
// sandbox/spawn (which takes any confiner) or anything outside sandbox/.
package chain
