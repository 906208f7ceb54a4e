// Command naiverunner is the benchmark's "naive Go runner": go-landlock's
// policy API restricting every thread of the process (psx all-threads
// syscalls), then exec. Usage: naiverunner <workspace> -- <argv>...
// It exists only to be measured beside landlock-run; it is built by the
// benchmark into a temp dir and never shipped.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
)

func main() {
	if len(os.Args) < 4 || os.Args[2] != "--" {
		fmt.Fprintln(os.Stderr, "usage: naiverunner <workspace> -- <argv>...")
		os.Exit(125)
	}
	err := landlock.V5.BestEffort().RestrictPaths(
		landlock.RODirs("/"),
		landlock.RWFiles("/dev/null"),
		landlock.RWDirs("/tmp", os.Args[1]),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "naiverunner:", err)
		os.Exit(125)
	}
	path, err := exec.LookPath(os.Args[3])
	if err == nil {
		err = syscall.Exec(path, os.Args[3:], os.Environ())
	}
	fmt.Fprintln(os.Stderr, "naiverunner: exec failed:", err)
	os.Exit(125)
}
