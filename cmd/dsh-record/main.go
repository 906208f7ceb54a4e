package main

import (
	"os"

	"github.com/dshsim/dshsim/harness/replay/recordcli"
)

func main() { os.Exit(recordcli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
