package probe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tids lists the threads of process pid.
func tids(pid string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join("/proc", pid, "task"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// eachThread runs f on every thread of a[0]: nil when f succeeded on any,
// else the errors, one per thread.
func eachThread(pid string, f func(tid int) error) error {
	ts, err := tids(pid)
	if err != nil {
		return err
	}
	var errs []error
	for _, tid := range ts {
		if err := f(tid); err == nil {
			return nil
		} else {
			errs = append(errs, fmt.Errorf("thread %d: %w", tid, err))
		}
	}
	return errors.Join(errs...)
}

func parseAddr(s string) (uintptr, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	return uintptr(v), err
}

func agentTrace(a []string) error {
	addr, err := parseAddr(a[1])
	if err != nil {
		return fmt.Errorf("bad address %q", a[1])
	}
	word := make([]byte, 8)
	copy(word, Payload)
	return eachThread(a[0], func(tid int) error {
		if _, _, e := syscall.Syscall6(syscall.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(tid), 0, 0, 0, 0); e != 0 {
			return e
		}
		defer unix.PtraceDetach(tid)
		syscall.Syscall6(syscall.SYS_PTRACE, unix.PTRACE_INTERRUPT, uintptr(tid), 0, 0, 0, 0)
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err != unix.EINTR {
				break
			}
		}
		_, err := unix.PtracePokeData(tid, addr, word)
		return err
	})
}

func agentVM(a []string) error {
	addr, err1 := parseAddr(a[1])
	n, err2 := strconv.Atoi(a[2])
	if err1 != nil || err2 != nil || n <= 0 {
		return fmt.Errorf("bad address or length %q %q", a[1], a[2])
	}
	return eachThread(a[0], func(tid int) error {
		buf := make([]byte, n)
		if _, err := unix.ProcessVMReadv(tid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}}, []unix.RemoteIovec{{Base: addr, Len: n}}, 0); err != nil {
			return err
		}
		fmt.Printf("read: %s\n", buf)
		p := []byte(Payload)
		if len(p) > n {
			p = p[:n]
		}
		_, err := unix.ProcessVMWritev(tid, []unix.Iovec{{Base: (*byte)(unsafe.Pointer(&p[0])), Len: uint64(len(p))}}, []unix.RemoteIovec{{Base: addr, Len: len(p)}}, 0)
		return err
	})
}

func agentMem(a []string) error {
	addr, err1 := parseAddr(a[1])
	n, err2 := strconv.Atoi(a[2])
	if err1 != nil || err2 != nil || n <= 0 {
		return fmt.Errorf("bad address or length %q %q", a[1], a[2])
	}
	return eachThread(a[0], func(tid int) error {
		f, err := os.Open(filepath.Join("/proc", a[0], "task", strconv.Itoa(tid), "mem"))
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, int64(addr)); err != nil {
			return err
		}
		fmt.Printf("read: %s\n", buf)
		return nil
	})
}

func agentFD(a []string) error {
	return eachThread(a[0], func(tid int) error {
		return writeFile(filepath.Join("/proc", a[0], "task", strconv.Itoa(tid), "fd", a[1]), os.O_WRONLY)
	})
}

func tgkillAll(a []string) error {
	pid, err := strconv.Atoi(a[0])
	if err != nil {
		return fmt.Errorf("bad pid %q", a[0])
	}
	return eachThread(a[0], func(tid int) error { return unix.Tgkill(pid, tid, unix.SIGUSR1) })
}
