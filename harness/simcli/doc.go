// Package simcli is the dsh-sim command: it runs the sims of a table
// (cmd/dsh-sim passes harness/sims' All), writes their effect files under
// snapshots/, checks the committed files and the documentation page against
// a fresh run, and renders the page with its includes expanded. cmd/dsh-sim's
// main only calls [Main]; the scenarios test binary registers the same call
// as the dsh-sim command for testscript.
//
// [Main] parses the flags into an options struct; run validates it (every
// flag against the others, -root and -o and the -render page before any sim
// runs, the table with harness.CheckSims, the -run selection), then lists,
// renders or runs (options.go, simcli.go, page.go; the help text is in
// usage.go).
//
// # Modes
//
//	dsh-sim                      run every sim, write changed files under snapshots/
//	dsh-sim -check               run every sim in memory, compare with snapshots/,
//	                             then resolve every include of docs/tools.md
//	dsh-sim -run PATTERN ...     only the sims whose name matches the regexp
//	dsh-sim -list                list sims, their summaries and files
//	dsh-sim -render PAGE [-o F]  write PAGE with every --8<-- include expanded
//
// The full text is in [Usage] (dsh-sim -h).
//
// # Exit status
//
// 0 when all is well; 1 when a sim fails, a file drifted or is missing, an
// unclaimed file sits in snapshots/, an include is broken or stale, or -run
// matches no sim (one line on stderr, as every dshsim command says "nothing
// matched"); 2 for a usage error.
//
// # Imports
//
// Test tooling: it imports harness, harness/cmdline and harness/snippets (not
// harness/sims, whose tests import it); no product package imports it.
package simcli
