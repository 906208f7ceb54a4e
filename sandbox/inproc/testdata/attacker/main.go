// Command attacker is run confined by the in-process launcher's tests: it
// tries, against the process that started it (the agent), every way a
// process of the same user reaches another one's threads, and prints one
// line per attempt: "<attack> <tid>: GOT" when the kernel let it through,
// "<attack> <tid>: blocked (<errno>)" when not.
//
//	attacker PID CANARY-ADDR CANARY-LEN PATCH [kill]
//
// PATCH is what the memory attacks write over the agent's canary (its
// address and length given in hexadecimal and decimal). With "kill" it
// ends by sending SIGKILL to every thread it was allowed to signal.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: attacker PID CANARY-ADDR CANARY-LEN PATCH [kill]")
		os.Exit(2)
	}
	pid, _ := strconv.Atoi(os.Args[1])
	addr, _ := strconv.ParseUint(os.Args[2], 16, 64)
	n, _ := strconv.Atoi(os.Args[3])
	patch := []byte(os.Args[4])
	if len(patch) > n {
		patch = patch[:n]
	}
	tids := threads(pid)
	report := func(name string, tid int, err error) {
		if err == nil {
			fmt.Printf("%s %d: GOT\n", name, tid)
			return
		}
		fmt.Printf("%s %d: blocked (%v)\n", name, tid, err)
	}
	for _, tid := range tids {
		report("ptrace-seize", tid, attach(tid, unix.PTRACE_SEIZE))
		report("ptrace-attach", tid, attach(tid, unix.PTRACE_ATTACH))
		report("vm-read", tid, vmRead(tid, uintptr(addr), n))
		report("vm-write", tid, vmWrite(tid, uintptr(addr), patch))
		report("proc-mem", tid, memRead(fmt.Sprintf("/proc/%d/task/%d/mem", pid, tid), int64(addr), n))
		report("proc-mem-write", tid, memWrite(fmt.Sprintf("/proc/%d/task/%d/mem", pid, tid), int64(addr), patch))
		report("task-fd", tid, fdWrite(fmt.Sprintf("/proc/%d/task/%d/fd", pid, tid)))
		report("tgkill", tid, unix.Tgkill(pid, tid, 0))
	}
	report("proc-mem", pid, memRead(fmt.Sprintf("/proc/%d/mem", pid), int64(addr), n))
	report("proc-mem-write", pid, memWrite(fmt.Sprintf("/proc/%d/mem", pid), int64(addr), patch))
	report("kill", pid, unix.Kill(pid, 0))
	if len(os.Args) > 5 && os.Args[5] == "kill" {
		for _, tid := range tids {
			if unix.Tgkill(pid, tid, unix.SIGKILL) == nil {
				fmt.Printf("sigkill %d: sent\n", tid)
			}
		}
	}
}

// threads lists the thread ids of pid.
func threads(pid int) []int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		fmt.Printf("threads: %v\n", err)
		return nil
	}
	var out []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out
}

// attach attaches to tid with req (PTRACE_ATTACH or PTRACE_SEIZE) and, when
// that worked, stops the thread and detaches again, so that the next
// attempt starts from an untraced thread.
func attach(tid, req int) error {
	if _, _, e := syscall.Syscall6(syscall.SYS_PTRACE, uintptr(req), uintptr(tid), 0, 0, 0, 0); e != 0 {
		return e
	}
	if req == unix.PTRACE_SEIZE {
		syscall.Syscall6(syscall.SYS_PTRACE, unix.PTRACE_INTERRUPT, uintptr(tid), 0, 0, 0, 0)
	}
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err == unix.EINTR {
			continue
		} else if err != nil || ws.Stopped() {
			break
		}
	}
	if err := unix.PtraceDetach(tid); err != nil {
		fmt.Printf("detach %d: %v\n", tid, err)
	}
	return nil
}

func vmRead(tid int, addr uintptr, n int) error {
	buf := make([]byte, n)
	_, err := unix.ProcessVMReadv(tid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}}, []unix.RemoteIovec{{Base: addr, Len: n}}, 0)
	return err
}

func vmWrite(tid int, addr uintptr, patch []byte) error {
	_, err := unix.ProcessVMWritev(tid, []unix.Iovec{{Base: (*byte)(unsafe.Pointer(&patch[0])), Len: uint64(len(patch))}}, []unix.RemoteIovec{{Base: addr, Len: len(patch)}}, 0)
	return err
}

func memRead(path string, addr int64, n int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.ReadAt(make([]byte, n), addr)
	return err
}

func memWrite(path string, addr int64, patch []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(patch, addr)
	return err
}

// fdWrite opens every descriptor link under dir for writing (appending)
// and writes a marker line; nil when any opened.
func fdWrite(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var last error = syscall.ENOENT
	for _, e := range entries {
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			last = err
			continue
		}
		f.WriteString("ATTACKER-WROTE-THIS\n")
		f.Close()
		return nil
	}
	return last
}
