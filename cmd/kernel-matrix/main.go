package main

import (
	"os"

	"github.com/dshsim/dshsim/harness/kernels"
)

func main() { os.Exit(kernels.Main(os.Args[1:], os.Stdout, os.Stderr)) }
