package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nowhere is an address no process maps: a process_vm_* call allowed to
// reach a process fails there with EFAULT.
const nowhere = 0x1000

func main() {
	inherited := openFDs() // first: before this program opens anything
	sig := flag.String("signal", "", "send STOP or KILL to the run stage instead of attacking")
	flag.Parse()
	chain, err := ancestors(os.Getpid())
	if err != nil {
		fmt.Fprintln(os.Stderr, "attack:", err)
		os.Exit(1)
	}
	if *sig != "" {
		os.Exit(signal(chain, *sig))
	}
	for _, fd := range inherited {
		target, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		fmt.Printf("attack inherited fd %d (%s): REACHED\n", fd, target)
	}
	n := 0
	for _, pid := range chain {
		for _, tid := range threads(pid) {
			attack(pid, tid)
			n++
		}
	}
	fmt.Printf("attack-done %d targets\n", n)
}

// openFDs are the descriptors above 2 this process holds: what it was
// started with, unless it opened them itself.
func openFDs() []int {
	var out []int
	for fd := 3; fd < 1024; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			out = append(out, fd)
		}
	}
	return out
}

// ancestors are the pids above pid, its parent first, PID 1 last.
func ancestors(pid int) ([]int, error) {
	var out []int
	for pid != 1 {
		ppid, err := parent(pid)
		if err != nil {
			return nil, err
		}
		if ppid == 0 {
			break
		}
		out = append(out, ppid)
		pid = ppid
	}
	return out, nil
}

// parent reads pid's parent from /proc/<pid>/stat.
func parent(pid int) (int, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	return strconv.Atoi(f[1])
}

// threads are pid's threads (pid itself when they cannot be listed).
func threads(pid int) []int {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return []int{pid}
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out
}

func report(pid, tid int, what string, err error) {
	who := strconv.Itoa(pid)
	if tid != pid {
		who += "/" + strconv.Itoa(tid)
	}
	if err == nil {
		fmt.Printf("attack %s %s: REACHED\n", who, what)
		return
	}
	fmt.Printf("attack %s %s: blocked (%v)\n", who, what, err)
}

// attack tries every way in on thread tid of pid.
func attack(pid, tid int) {
	report(pid, tid, "ptrace-attach", ptrace(unix.PTRACE_ATTACH, tid))
	report(pid, tid, "ptrace-seize", ptrace(unix.PTRACE_SEIZE, tid))
	report(pid, tid, "process_vm_readv", vm(unix.SYS_PROCESS_VM_READV, tid))
	report(pid, tid, "process_vm_writev", vm(unix.SYS_PROCESS_VM_WRITEV, tid))
	proc := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid)
	report(pid, tid, "mem", openClose(proc+"/mem", os.O_RDWR))
	report(pid, tid, "environ", openClose(proc+"/environ", os.O_RDONLY))
	fds, err := os.ReadDir(proc + "/fd")
	if err != nil {
		report(pid, tid, "fd", err)
		return
	}
	for _, fd := range fds {
		report(pid, tid, "fd/"+fd.Name(), openClose(proc+"/fd/"+fd.Name(), os.O_WRONLY|unix.O_NONBLOCK))
	}
}

// ptrace attaches (req) to tid and detaches again when that worked.
func ptrace(req, tid int) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	_, _, _ = unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(tid), 0, 0, 0, 0)
	return nil
}

// vm reads or writes one byte of tid's memory at nowhere: EFAULT means
// the kernel let the call reach the memory.
func vm(trap uintptr, tid int) error {
	var b [1]byte
	local := unix.Iovec{Base: &b[0], Len: 1}
	remote := unix.RemoteIovec{Base: nowhere, Len: 1}
	_, _, e := unix.Syscall6(trap, uintptr(tid), uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0)
	if e == 0 || errors.Is(e, unix.EFAULT) {
		return nil
	}
	return e
}

func openClose(p string, flag int) error {
	f, err := os.OpenFile(p, flag, 0)
	if err == nil {
		f.Close()
	}
	return err
}

// signal sends STOP or KILL to the run stage: the last of chain before
// PID 1.
func signal(chain []int, name string) int {
	sigs := map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "KILL": syscall.SIGKILL}
	s, ok := sigs[name]
	if !ok || len(chain) < 2 || chain[len(chain)-1] != 1 {
		fmt.Fprintf(os.Stderr, "attack: -signal %s: want STOP or KILL, below PID 1 (ancestors %v)\n", name, chain)
		return 2
	}
	target := chain[len(chain)-2]
	fmt.Printf("attack signal %s to %d\n", name, target)
	if err := syscall.Kill(target, s); err != nil {
		fmt.Printf("attack signal %s: blocked (%v)\n", name, err)
		return 1
	}
	return 0
}
