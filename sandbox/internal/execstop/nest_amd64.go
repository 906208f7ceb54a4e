//go:build linux && amd64

package execstop

import (
	"fmt"
	"syscall"

	"github.com/dshsim/dshsim/sandbox/internal/llsys"
)

// userCS64 is the code segment of a 64-bit program on amd64 (0x23 is a
// 32-bit one, whose system calls the code below would not make).
const userCS64 = 0x33

// sysLandlockRestrictSelf is landlock_restrict_self's number on amd64.
const sysLandlockRestrictSelf = 446

// nestCode runs in the child with rax = landlock_restrict_self, rdi = the
// ruleset descriptor, rsi = 0 (flags): the call, its result kept in r9,
// close(rdi) (a system call preserves rdi), a breakpoint. Padded with
// breakpoints to whole words.
var nestCode = []byte{
	0x0f, 0x05, // syscall
	0x49, 0x89, 0xc1, // mov r9, rax
	0xb8, 0x03, 0x00, 0x00, 0x00, // mov eax, 3 (close)
	0x0f, 0x05, // syscall
	0xcc,             // int3
	0xcc, 0xcc, 0xcc, // padding
}

// nestTrap is the offset after nestCode's breakpoint, where the child stops.
const nestTrap = 13

func restrictSelf(pid, fd int) error {
	var saved llsys.Regs
	if err := llsys.GetRegs(pid, &saved); err != nil {
		return fmt.Errorf("read its registers: %w", err)
	}
	if saved.Cs != userCS64 {
		return fmt.Errorf("not a 64-bit program (code segment %#x)", saved.Cs)
	}
	at := uintptr(saved.Rip)
	orig := make([]byte, len(nestCode))
	if err := llsys.PeekText(pid, at, orig); err != nil {
		return fmt.Errorf("read its entry point: %w", err)
	}
	if err := llsys.PokeText(pid, at, nestCode); err != nil {
		return fmt.Errorf("write its entry point: %w", err)
	}
	call := saved
	call.Rax, call.Rdi, call.Rsi = sysLandlockRestrictSelf, uint64(fd), 0
	call.Orig_rax = ^uint64(0) // no system call to restart
	if err := llsys.SetRegs(pid, &call); err != nil {
		return fmt.Errorf("set its registers: %w", err)
	}
	if err := llsys.PtraceCont(pid, 0); err != nil {
		return fmt.Errorf("run it to the breakpoint: %w", err)
	}
	sig, _, err := llsys.WaitStop(pid)
	if err != nil {
		return fmt.Errorf("run it to the breakpoint: %w", err)
	}
	var got llsys.Regs
	if err := llsys.GetRegs(pid, &got); err != nil {
		return fmt.Errorf("read its registers: %w", err)
	}
	if sig != syscall.SIGTRAP || got.Rip != saved.Rip+nestTrap {
		return fmt.Errorf("stopped by %v at %#x, not at the breakpoint %#x", sig, got.Rip, saved.Rip+nestTrap)
	}
	if err := llsys.PokeText(pid, at, orig); err != nil {
		return fmt.Errorf("restore its entry point: %w", err)
	}
	saved.Orig_rax = ^uint64(0)
	if err := llsys.SetRegs(pid, &saved); err != nil {
		return fmt.Errorf("restore its registers: %w", err)
	}
	if errno := syscall.Errno(-int64(got.R9)); got.R9 != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	if errno := syscall.Errno(-int64(got.Rax)); got.Rax != 0 {
		return fmt.Errorf("close the ruleset descriptor: %w", errno)
	}
	return nil
}
