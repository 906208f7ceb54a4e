// Package harness holds the simulation type and the golden machinery
// every scenario and test of dshsim uses: normalisation of varying text,
// writing and comparing effect files under snapshots/, line-by-line drift
// reports, and one switch that updates every golden.
//
// # Sims and effect files
//
// A [Sim] drives the real stack and returns its effect files keyed by path
// under snapshots/ ("txt/profiles.txt"). Package harness/sims lists its sims
// in one table sorted by name (one file per area holds each Run), which
// cmd/dsh-sim hands to the command; [CheckSims] checks such a table
// (sorted, distinct names and files). [RunSim] runs one with a fresh [Env] and checks its output:
// exactly the declared Files, clean relative names, and no repository root or
// temporary directory left in the text (that would differ on the next
// machine). A panicking sim is an error, not a crash.
//
// A run's temporary directories ([Env.TempDir]) and the sims' scratch
// directories are run directories ([MkdirRun]): each is held through a lock
// file beside it that the kernel releases when the process dies, so the next
// dsh-sim run removes what a killed run left ([RemoveDeadRuns]), and never a
// live run's or another user's.
//
// The dsh-sim command (package harness/simcli) writes the files ([WriteFile])
// and, with -check, compares them with the committed ones ([CompareFile]);
// package harness/sims runs the same comparison as go tests.
//
// # Normalisation
//
// Build one [Normalizer] per run and pass every text through it:
//
//	n := harness.NewNormalizer().Workspace(ws).Temp(tmp).JSONTimes("time", "createdAt")
//	out := n.String(text) // "/tmp/dshsim-x/ws/a.txt at 2026-12-02T12:00:00Z" -> "<ws>/a.txt at <time>"
//
// Paths become <ws> and <tmp> (the symlink-resolved form too), RFC 3339 times
// <time>, UUIDs <uuid-1>, <uuid-2>, ... numbered by first appearance;
// [Normalizer.IDs] adds other id shapes. [Replacer] is the plain
// longest-first string replacement underneath.
//
// # Comparing
//
// [CompareLines] compares committed and fresh text line by line and returns
// [Drift] values that print as
//
//	snapshots/txt/profiles.txt:12:
//		want: <committed line>
//		got:  <fresh line>
//
// with "(end of file)" for a side that ran out and quoting when invisible
// characters matter. [LineDiff] is the same as one string for failure
// messages. Diff text is only ever shown, never stored in a golden.
//
// # Updating goldens
//
// One environment variable updates every golden at once:
//
//	DSHSIM_UPDATE=1 go test ./...
//
// rewrites package goldens written with [Golden], the effect files under
// snapshots/ (the harness/sims tests) and the testscript scripts under
// scenarios/ (their cmp files). Running dsh-sim (make sim) rewrites the
// effect files alone. Without the variable, everything compares and fails on
// drift. Review the git diff afterwards: an update is a claim that the new
// behaviour is right.
//
// # Golden tests in other packages
//
// [Golden] is the helper for a package's own golden files, built on goldie v2
// with its update switch bound to DSHSIM_UPDATE:
//
//	func TestRender(t *testing.T) {
//		harness.Golden(t, "testdata", "render.golden", got)
//	}
//
// A mismatch fails the test with a [LineDiff]; a missing golden says how to
// create it. [GoldenPart] is the same for a run that can produce only part
// of the file (the escape corpus without root compares its golden without
// the root sections, and never writes it).
//
// [NodeTruth] is the same switch for expectations JavaScript pins: it runs
// node on a package's testdata/truth.js and hands back what node says, or,
// with DSHSIM_UPDATE=1, rewrites testdata/node-truth.json (hooks/jsregex and
// internal/jsjson compare their behaviour with node this way).
//
// # The layout
//
// harness is test tooling: no product package imports it or anything under
// it (the product's own tests may). Its tests also guard the package layout
// of the whole module: TestImportArrowsPointDown parses every non-test
// import and fails on an arrow that climbs (a product package importing
// harness/..., the sandbox tree reaching out of itself, sandbox/spawn
// importing render, a tool importing stack, ...; the rules are a table in
// layout_test.go).
package harness
