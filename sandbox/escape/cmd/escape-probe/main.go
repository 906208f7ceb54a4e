// Command escape-probe performs one file operation and reports its errno; see
// package github.com/dshsim/dshsim/sandbox/escape/probe.
package main

import (
	"os"

	"github.com/dshsim/dshsim/sandbox/escape/probe"
)

func main() { os.Exit(probe.Run(os.Args[1:], os.Stdout, os.Stderr)) }
