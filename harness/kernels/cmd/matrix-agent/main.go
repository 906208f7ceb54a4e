// Command matrix-agent runs the kernel-matrix probes and prints one
// "@@DSHSIM {json}" record per line; it runs as a static binary in the
// kernel-matrix initramfs. See package github.com/dshsim/dshsim/harness/kernels.
package main

import (
	"os"

	"github.com/dshsim/dshsim/harness/kernels"
)

func main() { os.Exit(kernels.AgentMain(os.Args[1:], os.Stdout, os.Stderr)) }
