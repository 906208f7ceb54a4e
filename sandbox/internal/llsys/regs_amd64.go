//go:build linux && amd64

package llsys

import "golang.org/x/sys/unix"

// Regs are a traced child's general registers (amd64).
type Regs = unix.PtraceRegs

// GetRegs reads the stopped traced child's registers.
func GetRegs(pid int, r *Regs) error { return unix.PtraceGetRegs(pid, r) }

// SetRegs writes the stopped traced child's registers.
func SetRegs(pid int, r *Regs) error { return unix.PtraceSetRegs(pid, r) }
