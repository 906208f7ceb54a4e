// Package cli is the dsh-oracle command: replay, regen, diff and bench over
// the oracle (package harness/oracle) and the differential generator
// (package harness/oracle/diff). Main dispatches the command; each parses
// its flags with package cmdline's contract, checks them, then runs.
package cli
