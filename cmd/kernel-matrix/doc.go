// Command kernel-matrix runs the Landlock probes with the runner, and on the
// stack's default (in-process) Landlock path, capped at ABI 1..7 on this
// machine and on real kernels booted under qemu, and checks
// snapshots/kernel-matrix.txt. See package
// github.com/dshsim/dshsim/harness/kernels.
//
// A thin main: it imports harness/kernels (its Main) and nothing else of
// this module.
package main
