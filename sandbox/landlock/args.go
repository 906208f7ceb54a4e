package landlock

import (
	"strconv"
)

// Invocation is one parsed command line.
type Invocation struct {
	// Probe is --probe: restrict a short-lived thread with --ro / and report.
	Probe bool
	// ABI is --abi: report the kernel's Landlock ABI.
	ABI bool
	// ABICap is --abi-cap N (0 = none): use no more than ABI N.
	ABICap int
	// Scope is --scope: also scope signals and abstract unix sockets (ABI 6),
	// so the command cannot signal or connect to a process outside its domain.
	Scope bool
	// RO and RW are the --ro and --rw paths in command-line order
	// (--rw-inode paths among the RW ones).
	RO, RW []string
	// Inodes are the files the --rw-inode paths must open as (see
	// [Rules.Inodes]); nil without any.
	Inodes map[string]FileID
	// Argv is everything after "--".
	Argv []string
}

// UsageError is a command-line error; its message follows "usage error: ".
type UsageError struct{ Msg string }

// Error returns "usage error: <msg>".
func (e *UsageError) Error() string { return "usage error: " + e.Msg }

// Parse parses the arguments after the program name. It is pure: the VERBATIM
// usage errors of the runner contract come from here.
func Parse(args []string) (Invocation, error) {
	var inv Invocation
	if len(args) == 1 && args[0] == "--probe" {
		inv.Probe = true
		return inv, nil
	}
	if len(args) == 1 && args[0] == "--abi" {
		inv.ABI = true
		return inv, nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--":
			inv.Argv = args[i+1:]
			if len(inv.Argv) == 0 {
				return Invocation{}, &UsageError{"missing `-- <argv>...` command"}
			}
			return inv, nil
		case "--ro", "--rw":
			if i+1 >= len(args) {
				return Invocation{}, &UsageError{a + " requires a path"}
			}
			i++
			if a == "--ro" {
				inv.RO = append(inv.RO, args[i])
			} else {
				inv.RW = append(inv.RW, args[i])
			}
		case "--rw-inode":
			if i+2 >= len(args) {
				return Invocation{}, &UsageError{"--rw-inode requires a path and its <device>:<inode>"}
			}
			id, err := ParseFileID(args[i+2])
			if err != nil {
				return Invocation{}, &UsageError{"--rw-inode " + args[i+1] + ": " + err.Error()}
			}
			if inv.Inodes == nil {
				inv.Inodes = map[string]FileID{}
			}
			inv.RW, inv.Inodes[args[i+1]] = append(inv.RW, args[i+1]), id
			i += 2
		case "--scope":
			inv.Scope = true
		case "--probe", "--abi":
			return Invocation{}, &UsageError{a + " takes no other arguments"}
		case "--abi-cap":
			if i+1 >= len(args) {
				return Invocation{}, &UsageError{"--abi-cap requires a positive integer"}
			}
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil || n < 1 {
				return Invocation{}, &UsageError{"--abi-cap requires a positive integer, got " + strconv.Quote(args[i])}
			}
			inv.ABICap = n
		default:
			return Invocation{}, &UsageError{"unknown argument: " + a}
		}
	}
	return Invocation{}, &UsageError{"missing `-- <argv>...` command"}
}
