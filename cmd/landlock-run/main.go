package main

import (
	"os"

	"github.com/dshsim/dshsim/sandbox/landlock"
)

// The runner does its whole job in init: every init function runs on the
// startup thread with the main goroutine locked to it, which is what
// landlock.InitMain needs to restrict and exec from one thread without
// runtime.LockOSThread (see its documentation).
func init() {
	os.Exit(landlock.InitMain(os.Args[1:], os.Stdout, os.Stderr))
}

func main() {}
