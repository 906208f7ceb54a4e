// Package scenarios runs the testscript scripts in this directory
// (<area>_<topic>.txtar) against the real commands: the test binary doubles as
// dsh-sim, dsh-replay and landlock-run (testscript.Main), so scripts drive
// the same Main functions the installed commands run.
//
// # Environment
//
// Scripts are hermetic: HOME=/no-home, TMPDIR inside the script's work dir,
// LC_ALL=C, and PATH as the test got it. $REPO is the repository root (for
// dsh-sim -root $REPO and the recordings under $REPO/transcripts).
//
// # Conditions
//
// The conditions are sandboxtest.Condition, shared with every other sandbox
// test; an unknown condition fails the script.
//
//	[landlock:N]  the kernel's Landlock ABI is at least N
//	[bwrap]       bubblewrap works here (the provider's probe, sandbox.ProbeBwrap:
//	              the read-only bwrap profile around true exits 0)
//
// # Commands beyond testscript's own
//
//	dsh-sim, dsh-replay, landlock-run   (with exec only)
//	tamper DIR   change line 1 of the first non-empty file under DIR (sorted)
//	             to "tampered by the scenario" and print "tampered REL:1"
//
// # Updating
//
// DSHSIM_UPDATE=1 go test ./scenarios rewrites the files that cmp compares
// with (testscript's UpdateScripts), like every other golden.
//
// # Imports
//
// Test-only package (its code is in _test.go files): it imports the
// commands' Main functions, harness and sandboxtest.
package scenarios
