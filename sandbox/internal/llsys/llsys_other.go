//go:build !linux

package llsys

import "syscall"

// ABIVersion fails with ENOSYS off Linux.
func ABIVersion() (int, error) { return 0, syscall.ENOSYS }

// CreateRuleset fails with ENOSYS off Linux.
func CreateRuleset(handled, scoped uint64) (int, error) { return -1, syscall.ENOSYS }

// FileID names a file by device and inode number.
type FileID struct{ Dev, Ino uint64 }

// OpenPath fails with ENOSYS off Linux.
func OpenPath(path string) (int, FileID, bool, error) { return -1, FileID{}, false, syscall.ENOSYS }

// AddPathBeneath fails with ENOSYS off Linux.
func AddPathBeneath(rulesetFD, parentFD int, allowed uint64) error { return syscall.ENOSYS }

// SetNoNewPrivs fails with ENOSYS off Linux.
func SetNoNewPrivs() error { return syscall.ENOSYS }

// RestrictSelf fails with ENOSYS off Linux.
func RestrictSelf(rulesetFD int) error { return syscall.ENOSYS }

// ClearAmbientCaps fails with ENOSYS off Linux.
func ClearAmbientCaps() error { return syscall.ENOSYS }

// DropBoundingCap fails with ENOSYS off Linux.
func DropBoundingCap(c int) error { return syscall.ENOSYS }

// CapSetpcap is the number of CAP_SETPCAP.
const CapSetpcap = 8

// EffectiveCap fails with ENOSYS off Linux.
func EffectiveCap(c int) (bool, error) { return false, syscall.ENOSYS }

// ClearCaps fails with ENOSYS off Linux.
func ClearCaps() error { return syscall.ENOSYS }

// Close fails with ENOSYS off Linux.
func Close(fd int) error { return syscall.ENOSYS }

// Gettid returns 0 off Linux.
func Gettid() int { return 0 }

// WaitStop fails with ENOSYS off Linux.
func WaitStop(pid int) (syscall.Signal, bool, error) { return 0, false, syscall.ENOSYS }

// PtraceCont fails with ENOSYS off Linux.
func PtraceCont(pid int, sig syscall.Signal) error { return syscall.ENOSYS }

// PtraceDetach fails with ENOSYS off Linux.
func PtraceDetach(pid int) error { return syscall.ENOSYS }

// PeekText fails with ENOSYS off Linux.
func PeekText(pid int, addr uintptr, out []byte) error { return syscall.ENOSYS }

// PokeText fails with ENOSYS off Linux.
func PokeText(pid int, addr uintptr, data []byte) error { return syscall.ENOSYS }

// Prlimit fails with ENOSYS off Linux.
func Prlimit(pid, resource int, soft, hard uint64) error { return syscall.ENOSYS }

// Getrlimit fails with ENOSYS off Linux.
func Getrlimit(resource int) (soft, hard uint64, err error) { return 0, 0, syscall.ENOSYS }

// SetDumpable fails with ENOSYS off Linux.
func SetDumpable(on bool) error { return syscall.ENOSYS }

// Dumpable fails with ENOSYS off Linux.
func Dumpable() (bool, error) { return false, syscall.ENOSYS }

// Kill fails with ENOSYS off Linux.
func Kill(pid int) error { return syscall.ENOSYS }

// RlimitNproc is RLIMIT_NPROC's number on Linux.
const RlimitNproc = 6

// Writable is false off Linux.
func Writable(path string) bool { return false }
