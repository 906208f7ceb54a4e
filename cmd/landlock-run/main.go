package main

import (
	"os"

	"github.com/dshsim/dshsim/sandbox/landlock"
)

// The runner does its whole job in init, because Go leaves no other way to
// run on the startup thread as it is: every init function runs there with
// the main goroutine locked to it, but the runtime unlocks it before main,
// and locking it again (runtime.LockOSThread) would first start the
// runtime's template thread, one more clone on the way to the command.
// landlock.InitMain restricts and execs from that one thread (see its
// documentation); it parses the arguments into options and runs them like
// every other command.
func init() {
	os.Exit(landlock.InitMain(os.Args[1:], os.Stdout, os.Stderr))
}

func main() {}
