package main

import (
	"os"

	"github.com/dshsim/dshsim/harness/simcli"
	_ "github.com/dshsim/dshsim/harness/sims" // registers the sims
)

func main() {
	os.Exit(simcli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
