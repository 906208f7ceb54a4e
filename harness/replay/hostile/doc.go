// Package hostile makes hostile copies of upstream recordings: a recording
// is code (its hooks, bash calls, file tool calls and run_code programs run
// for real, it states its own mode, approves its own escalations and names
// its own Landlock runner), and these copies turn each of those against the
// host. Replaying one must leave the host as it was: the contained replay of
// package harness/replay/isolate is the only thing between them (every copy
// runs its attack in a mode that lets the stack do it: danger-full-access,
// stated or self-approved, or a runner of the recording's own).
//
// One package makes them for both of their users: the replay's test
// (harness/replay, TestHostileRecordingLeavesNothingOnTheHost) and the escape
// corpus (harness/escape, the hostile-recordings table of
// snapshots/escape.txt), which checks the host with its snapshots.
//
// # Cases
//
// [Cases] lists them; each is an upstream recording of transcripts/ (Base)
// edited by [Case.Make] against a [Target]: a host directory, a host file,
// a listener on the host's loopback, and an environment entry its leftover
// processes carry. The attack's shell steps each say what they got
// ("<who>-connected", "<who>-sysctl-written") and end with "<who>-done";
// [Case.Check] reads a replay's [replay.Result]: an error when the attack did
// not run to its end (or, for a seed past its bounds, when the recording was
// not refused before anything ran), so a check that saw nothing can never
// pass for a blocked attack, and the claims of a step that got through.
//
// What got through the host sees itself: the directory and file changed,
// the listener reached, a process left running. [Case.Check] adds only what
// the host cannot see (a sysctl written back with its own value).
//
// [RunCases] are three more, which attack the replay itself rather than the
// host: a program the recording carries (testdata/attack, built by the
// tests: [Program]) traces, reads and writes the memory and opens the
// descriptors of the replay's run stage and PID 1, or stops or kills the
// run stage. [Case.Check] counts every "REACHED" the program prints as a
// claim, and a case that stops or kills the run stage must end the replay
// in an error ([Case.Fails]). The escape corpus runs [Cases] only.
//
// # Target
//
// [Target.Expose] makes the directory and file writable by everyone: a
// replay run by root runs as the host's nobody, which a directory only root
// can write would stop without any containment, and the attacks must test
// the containment.
//
// # Imports
//
// Test tooling: harness/replay (the result it checks), its recording and
// projection packages, sandbox (the modes) and sandbox/sandboxtest (the
// attack program's build). Nothing under harness/replay imports it but
// tests; harness/escape does.
package hostile
