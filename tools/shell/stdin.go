package shell

import (
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// syscalls are the numbers of the system calls upstream's Linux process
// inspector reads as a wait for input (-1: none on the architecture).
type syscalls struct{ read, selectNr, pselect, poll, ppoll, epollWait, epollPwait int64 }

// syscallTables are upstream's, per architecture (runtime.GOARCH).
var syscallTables = map[string]syscalls{
	"amd64": {read: 0, selectNr: 23, pselect: 270, poll: 7, ppoll: 271, epollWait: 232, epollPwait: 281},
	"arm64": {read: 63, selectNr: -1, pselect: 72, poll: -1, ppoll: 73, epollWait: -1, epollPwait: 22},
}

// procSyscall is a thread's /proc/<pid>/task/<tid>/syscall: the number
// and the first six arguments of the call it is blocked in.
type procSyscall struct {
	nr   int64
	args [6]uint64
}

// parseSyscall reads a syscall line; false for a running thread, one not
// in a system call ("-1 ...") or a malformed line, as upstream's
// readSyscall.
func parseSyscall(text string) (procSyscall, bool) {
	text = strings.TrimSpace(text)
	if text == "running" || strings.HasPrefix(text, "-1 ") {
		return procSyscall{}, false
	}
	f := strings.Fields(text)
	if len(f) < 7 {
		return procSyscall{}, false
	}
	var sc procSyscall
	var err error
	if sc.nr, err = strconv.ParseInt(f[0], 10, 64); err != nil {
		return procSyscall{}, false
	}
	for i := range sc.args {
		if sc.args[i], err = strconv.ParseUint(strings.TrimPrefix(f[i+1], "0x"), 16, 64); err != nil {
			return procSyscall{}, false
		}
	}
	return sc, true
}

// parsePgrp is the process group of a /proc/<pid>/stat line (the comm in
// parentheses may hold spaces and parentheses).
func parsePgrp(stat string) (int, bool) {
	closing := strings.LastIndexByte(stat, ')')
	if closing < 0 || closing+2 > len(stat) {
		return 0, false
	}
	f := strings.Fields(stat[closing+2:])
	if len(f) < 3 {
		return 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return pgrp, err == nil
}

// processMemory reads a process's memory and its epoll descriptors' fdinfo
// (the thin layer over /proc; tests give their own).
type processMemory interface {
	mem(pid int, addr uint64, n int) []byte
	fdinfo(pid int, fd uint64) string
}

// waitsOnStdin is upstream's syscallWaitsOnStdin: a read of descriptor 0,
// a select or pselect whose read set holds 0, a poll or ppoll with a
// POLLIN entry for 0, or an epoll wait whose set holds 0.
func waitsOnStdin(pm processMemory, pid int, sc procSyscall, tab syscalls) bool {
	a0, a1, a2 := sc.args[0], sc.args[1], sc.args[2]
	switch sc.nr {
	case tab.read:
		return a0 == 0
	case tab.selectNr, tab.pselect:
		if a0 < 1 || a1 == 0 {
			return false
		}
		b := pm.mem(pid, a1, 8)
		return len(b) > 0 && b[0]%2 == 1
	case tab.poll, tab.ppoll:
		if a1 < 1 || a0 == 0 {
			return false
		}
		b := pm.mem(pid, a0, int(min(a1, 1024))*8)
		for off := 0; off+8 <= len(b); off += 8 {
			if int32(binary.LittleEndian.Uint32(b[off:])) == 0 && int16(binary.LittleEndian.Uint16(b[off+4:]))&1 != 0 {
				return true
			}
		}
		return false
	case tab.epollWait, tab.epollPwait:
		if a2 < 1 {
			return false
		}
		for _, line := range strings.Split(pm.fdinfo(pid, a0), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "tfd:" && f[1] == "0" {
				return true
			}
		}
	}
	return false
}

// proc is the host's /proc.
type proc struct{}

func (proc) mem(pid int, addr uint64, n int) []byte {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	m, _ := f.ReadAt(b, int64(addr))
	return b[:m]
}

func (proc) fdinfo(pid int, fd uint64) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.FormatUint(fd, 10))
	return string(b)
}

// numeric are the numeric entries of a /proc directory.
func numeric(dir string) []int {
	ents, _ := os.ReadDir(dir)
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// stdinWaiting is upstream's isStdinWaiting on Linux: whether a thread of
// a process in group pgid is blocked waiting to read descriptor 0. What
// /proc does not let us read (another user's process) is not a wait.
func stdinWaiting(pgid int) bool {
	tab, ok := syscallTables[runtime.GOARCH]
	if !ok {
		return false
	}
	for _, pid := range numeric("/proc") {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if g, ok := parsePgrp(string(stat)); err != nil || !ok || g != pgid {
			continue
		}
		for _, tid := range numeric("/proc/" + strconv.Itoa(pid) + "/task") {
			text, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/syscall")
			if err != nil {
				continue
			}
			if sc, ok := parseSyscall(string(text)); ok && waitsOnStdin(proc{}, pid, sc, tab) {
				return true
			}
		}
	}
	return false
}

// foreground is the terminal's foreground process group (TIOCGPGRP on
// the master, in our pid namespace); false when it has none.
func foreground(master *os.File) (int, bool) {
	rc, err := master.SyscallConn()
	if err != nil {
		return 0, false
	}
	pgid, ierr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) { pgid, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }); err != nil || ierr != nil || pgid <= 0 {
		return 0, false
	}
	return pgid, true
}
