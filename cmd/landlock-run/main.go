package main

import (
	"os"

	"github.com/dshsim/dshsim/sandbox/landlock"
)

func main() {
	os.Exit(landlock.Main(os.Args[1:], os.Stdout, os.Stderr))
}
