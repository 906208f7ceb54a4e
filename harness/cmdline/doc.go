// Package cmdline is the command-line contract every dshsim command keeps
// (dsh-sim, dsh-replay, dsh-record, dsh-oracle, kernel-matrix, matrix-agent;
// a test in package harness finds every command that uses this package and
// fails when one is missing here):
//
//   - -h (or -help) prints the whole help to stdout and exits 0;
//   - a bad flag, a bad flag value or a bad argument is ONE line on stderr,
//     "<cmd>: <problem>; run <cmd> -h for usage", and exit status 2, before the
//     command starts anything;
//   - a flag after the first argument is a usage error (Go's flag package
//     would read it as an argument and silently ignore what it asked for);
//   - paths a flag names are checked before anything runs, and a bad one is
//     a usage error: an output directory the command makes is made without
//     its parents ([Command.CheckOutDir]); an output file written at the end
//     must have its directory ([Command.CheckOutFile]); an input file must be
//     a regular file it can open ([CheckInFile]); messages name each path
//     once ([Reason]);
//   - a selection that matches nothing (dsh-sim -run, dsh-sim -list -run,
//     dsh-replay -run or -shard) is ONE line on stderr, "<cmd>: no <thing>
//     matches <selection> (<what there is>)", nothing on stdout, exit status
//     1 ([NoMatch]), and nothing runs;
//   - SIGINT and SIGTERM ([WithInterrupt]) cancel what the command runs, its
//     deferred cleanup removes what it made, and it exits 128+signal (130,
//     143); a second signal ends it at once.
//
// # Shape of a command
//
// Every command has the same shape: a thin main calls the package's Main,
// which parses the flags into an options struct ([Command.Parse]) and
// returns [Command.Exit] of run(opts), and run validates the options
// (usage problems as [Usage] errors) before it does anything. A run that
// has already reported its failure returns a [Status].
//
// landlock-run keeps upstream's own contract (exit 125, VERBATIM lines) and
// does not use this package; escape-probe, a leaf that imports nothing of this
// module, spells the same contract out by hand.
//
// # Imports
//
// The standard library only; it imports nothing of this module.
package cmdline
