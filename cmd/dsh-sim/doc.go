// Command dsh-sim runs dshsim's registered simulations and writes, or with
// -check verifies, their effect files under snapshots/ and the includes of
// the documentation page. Run dsh-sim -h for the full usage; the logic lives
// in package harness/simcli.
//
// A thin main: it imports harness/simcli (its Main) and, for their
// registration, the sims of harness/sims; nothing else of this module.
package main
