// Command dsh-sim runs dshsim's simulations (harness/sims' table) and writes, or with
// -check verifies, their effect files under snapshots/ and the includes of
// the documentation page. Run dsh-sim -h for the full usage; the logic lives
// in package harness/simcli.
//
// A thin main: it hands the sims' table (harness/sims' All) to the command
// (harness/simcli's Main); it imports nothing else of this module.
package main
