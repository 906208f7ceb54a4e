// Command dsh-replay replays recorded model sessions through the real tool
// stack and compares the tool boundary with the recording; see package
// harness/replay/cli and `dsh-replay -h`.
package main

import (
	"os"

	"github.com/dshsim/dshsim/harness/replay/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
