//go:build linux

package llsys

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// WaitStop waits for the traced child pid to stop and returns the signal
// that stopped it. A child that exited or was killed instead is an error.
// Only the tracer's thread group sees a traced child's stops.
func WaitStop(pid int) (syscall.Signal, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		break
	}
	switch {
	case ws.Stopped():
		return ws.StopSignal(), nil
	case ws.Exited():
		return 0, fmt.Errorf("exited with status %d before it ran", ws.ExitStatus())
	case ws.Signaled():
		return 0, fmt.Errorf("killed by %v before it ran", ws.Signal())
	}
	return 0, fmt.Errorf("unexpected wait status %#x", uint32(ws))
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
