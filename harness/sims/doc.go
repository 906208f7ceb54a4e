// Package sims holds dsh-sim's simulations: one file per area holds the
// sim's Run function (<area>.go), and sims.go lists them all in one table,
// one entry each, sorted by name, which [All] returns:
//
//	{Name: "sandbox", Files: []string{"txt/profiles.txt", "out/sandbox.txt"}, Run: runSandbox,
//		Summary: "profiles, probe, confine() and real runs under Landlock"},
//
// cmd/dsh-sim passes [All] to the command (harness/simcli); importing the
// package registers nothing. The tests in this package check the table
// (harness.CheckSims), run every sim, one subtest each, and compare its
// files line by line with the committed ones under snapshots/; with
// DSHSIM_UPDATE=1 they write them instead. They also check the includes of
// docs/tools.md against the fresh run, as dsh-sim -check does.
//
// # Writing a sim
//
// Drive the real stack; construct only what the docs page says is
// constructed, and name it so in the output. Get temporary directories from
// [harness.Env.TempDir], and a workspace or an "outside" target that must
// lie outside /tmp from scratchDir (a run directory under the scratch root,
// which a killed run leaves to the next dsh-sim run); pass every text
// through one [harness.Normalizer] so paths, times and ids are stable. Return exactly the files listed in
// Files; [harness.RunSim] rejects anything else, and any file that still
// contains the repository root or a temporary directory.
package sims
