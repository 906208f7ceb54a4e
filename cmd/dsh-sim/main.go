package main

import (
	"os"

	"github.com/dshsim/dshsim/harness/simcli"
	"github.com/dshsim/dshsim/harness/sims"
)

func main() { os.Exit(simcli.Main(sims.All(), os.Args[1:], os.Stdout, os.Stderr)) }
