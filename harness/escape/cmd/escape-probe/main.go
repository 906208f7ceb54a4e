package main

import (
	"os"

	"github.com/dshsim/dshsim/harness/escape/probe"
)

func main() { os.Exit(probe.Run(os.Args[1:], os.Stdout, os.Stderr)) }
