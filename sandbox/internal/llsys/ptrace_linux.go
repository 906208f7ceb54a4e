//go:build linux

package llsys

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WaitStop waits for the traced child pid to stop or end. A stop is
// collected and its signal returned; an end is only looked at (waitid with
// WNOWAIT: its status stays for whoever reaps the child) and reported as
// ended, with what it says in the error.
func WaitStop(pid int) (sig syscall.Signal, ended bool, err error) {
	var info childInfo
	for {
		err = unix.Waitid(unix.P_PID, pid, (*unix.Siginfo)(unsafe.Pointer(&info)), unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT|unix.WALL, nil)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return 0, false, err
	}
	status := info.Status
	switch info.Code {
	case cldTrapped, cldStopped:
		var ws unix.WaitStatus
		for {
			_, err = unix.Wait4(pid, &ws, unix.WALL, nil)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			return 0, false, err
		}
		if !ws.Stopped() {
			return 0, false, fmt.Errorf("unexpected wait status %#x after a stop", uint32(ws))
		}
		return ws.StopSignal(), false, nil
	case cldExited:
		return 0, true, fmt.Errorf("exited with status %d", status)
	default:
		return 0, true, fmt.Errorf("killed by %v", syscall.Signal(status))
	}
}

// si_code values of a child's siginfo (<asm-generic/siginfo.h>).
const (
	cldExited  = 1
	cldTrapped = 4
	cldStopped = 5
)

// childInfo is the siginfo_t waitid fills for a child (SIGCHLD's fields),
// the size of unix.Siginfo.
type childInfo struct {
	Signo, Errno, Code int32
	_                  int32
	Pid                int32
	UID                uint32
	Status             int32
	_                  [128 - 28]byte
}

// PtraceCont resumes the stopped traced child pid, delivering sig (0: none).
func PtraceCont(pid int, sig syscall.Signal) error { return unix.PtraceCont(pid, int(sig)) }

// PtraceDetach lets the stopped traced child pid go, delivering no signal.
func PtraceDetach(pid int) error { return unix.PtraceDetach(pid) }

// PeekText reads len(out) bytes of the stopped traced child's memory at addr.
func PeekText(pid int, addr uintptr, out []byte) error {
	n, err := unix.PtracePeekText(pid, addr, out)
	if err == nil && n != len(out) {
		err = fmt.Errorf("read %d of %d bytes", n, len(out))
	}
	return err
}

// PokeText writes data (a multiple of the word size) into the stopped traced
// child's memory at addr, its text included (the kernel copies the page for
// the child alone).
func PokeText(pid int, addr uintptr, data []byte) error {
	n, err := unix.PtracePokeText(pid, addr, data)
	if err == nil && n != len(data) {
		err = fmt.Errorf("wrote %d of %d bytes", n, len(data))
	}
	return err
}

// Prlimit sets resource's soft and hard limits of process pid.
func Prlimit(pid, resource int, soft, hard uint64) error {
	return unix.Prlimit(pid, resource, &unix.Rlimit{Cur: soft, Max: hard}, nil)
}

// Getrlimit returns this process's soft and hard limits of resource.
func Getrlimit(resource int) (soft, hard uint64, err error) {
	var r unix.Rlimit
	err = unix.Getrlimit(resource, &r)
	return r.Cur, r.Max, err
}

// SetDumpable sets this process's dumpable flag (prctl PR_SET_DUMPABLE): a
// process that is not dumpable can be traced, have its memory read or
// written and its /proc descriptors opened only by a caller holding
// CAP_SYS_PTRACE in its user namespace, whatever their user ids.
func SetDumpable(on bool) error {
	v := 0
	if on {
		v = 1
	}
	return unix.Prctl(unix.PR_SET_DUMPABLE, uintptr(v), 0, 0, 0)
}

// Dumpable reports this process's dumpable flag.
func Dumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return v == 1, err
}

// Kill sends SIGKILL to process pid.
func Kill(pid int) error { return unix.Kill(pid, unix.SIGKILL) }

// RlimitNproc is RLIMIT_NPROC: the processes and threads of a real user id.
const RlimitNproc = unix.RLIMIT_NPROC

// Writable reports whether this process may write path, by its effective
// ids (faccessat with AT_EACCESS).
func Writable(path string) bool {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil
}
