package main

import (
	"os"

	"github.com/dshsim/dshsim/harness/oracle/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
