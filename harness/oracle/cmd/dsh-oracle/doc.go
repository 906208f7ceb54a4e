// Command dsh-oracle runs upstream's own code (the oracle that
// DSHSIM_ORACLE names) against recordings and generated model scripts:
// replay (upstream's MATCH or DIFF per recording), regen (recordings from
// harness/oracle/gen), diff (differential testing against our stack) and
// bench (replay speed, ours beside upstream's). Its logic is package
// harness/oracle/cli; dsh-oracle -h lists the commands.
package main
