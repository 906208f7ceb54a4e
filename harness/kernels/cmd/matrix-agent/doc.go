// Command matrix-agent runs the kernel-matrix probes and prints one
// "@@DSHSIM {json}" record per line; it runs as a static binary in the
// kernel-matrix initramfs. See package github.com/dshsim/dshsim/harness/kernels.
//
// A thin main over harness/kernels, which it alone imports.
package main
