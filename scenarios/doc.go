// Package scenarios runs the testscript scripts in this directory
// (<area>_<topic>.txtar) against the real commands: the test binary doubles as
// every command of the module (testscript.Main), so scripts drive the same
// Main functions the installed commands run.
//
// # Environment
//
// Scripts are hermetic: HOME=/no-home, TMPDIR inside the script's work dir,
// LC_ALL=C, and PATH as the test got it. $REPO is the repository root (for
// dsh-sim -root $REPO and the recordings under $REPO/transcripts). The go
// tool, which dsh-sim's sandbox sim runs, gets the caller's GOCACHE,
// GOMODCACHE and GOPATH (never a cache under /no-home, which root would
// create and a later user could not write) and XDG_CONFIG_HOME inside the work
// dir. $SCRATCH (= $DSHSIM_SCRATCH, see sandboxtest.ScratchRoot) is a fresh
// directory outside the temp areas; when a script ends, it and the script's
// TMPDIR must be empty, or the script fails naming what was left behind.
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
//	dsh-sim, dsh-replay, dsh-record, landlock-run, kernel-matrix,
//	matrix-agent, escape-probe   (with exec only)
//	docblock PAGE NAME SOURCE...   the fenced block of $REPO/PAGE marked
//	             "<!-- checked: NAME -->" must be, byte for byte, the lines of
//	             the SOURCEs in order: stdout, a work-dir file or @PATH of the
//	             repository, each narrowed as an include is (:START:END,
//	             :SECTION); TestDocsOutputCopiesAreChecked fails on a block of
//	             the docs that copies output and no docblock line checks
//	quoted FILE REGEXP   REGEXP's one group must be the same text in the
//	             last stdout and in $REPO/FILE (a quotation in the docs)
//	tamper DIR   change line 1 of the first non-empty file under DIR (sorted)
//	             to "tampered by the scenario" and print "tampered REL:1"
//	tamper FILE:LINE OLD NEW   replace OLD by NEW in that line of FILE
//	usage CMD ARG...   run CMD and fail unless it is a usage error: exit 2,
//	             nothing on stdout, one stderr line "CMD: ...; run CMD -h
//	             for usage" (kept for the next stderr check)
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
