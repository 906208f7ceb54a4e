// Package cmdline is the command-line contract every dshsim command keeps
// (dsh-sim, dsh-replay, kernel-matrix, matrix-agent):
//
//   - -h (or -help) prints the whole help to stdout and exits 0;
//   - a bad flag, a bad flag value or a bad argument is ONE line on stderr,
//     "<cmd>: <problem>; run <cmd> -h for usage", and exit status 2, before the
//     command starts anything;
//   - a flag after the first argument is a usage error (Go's flag package
//     would read it as an argument and silently ignore what it asked for);
//   - SIGINT and SIGTERM ([WithInterrupt]) cancel what the command runs, its
//     deferred cleanup removes what it made, and it exits 128+signal (130,
//     143); a second signal ends it at once.
//
// landlock-run keeps upstream's own contract (exit 125, VERBATIM lines) and
// does not use this package; escape-probe, a leaf that imports nothing of this
// module, spells the same contract out by hand.
//
// # Imports
//
// The standard library only; it imports nothing of this module.
package cmdline
