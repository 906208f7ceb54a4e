package replay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what a /proc/<pid>/stat line says of a process.
type procStat struct {
	PID     int
	Comm    string
	State   byte
	PPID    int
	PGrp    int
	Session int
}

func (p procStat) String() string {
	return fmt.Sprintf("pid %d (%s) state %c", p.PID, p.Comm, p.State)
}

// parseStat parses a /proc/<pid>/stat line, "pid (comm) state ppid pgrp
// session ...". comm may hold spaces and parentheses, so it runs from the
// first '(' to the line's last ')'.
func parseStat(line string) (procStat, error) {
	var p procStat
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return p, errors.New("no (comm) field")
	}
	pid, ok := strings.CutSuffix(line[:open], " ")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 {
		return p, fmt.Errorf("field pid: %q is not a process id followed by one space", line[:open])
	}
	p.PID, p.Comm = n, line[open+1:end]
	f := strings.Fields(line[end+1:])
	if len(f) < 4 {
		return p, fmt.Errorf("%d fields after (comm), want at least 4 (state ppid pgrp session)", len(f))
	}
	if len(f[0]) != 1 {
		return p, fmt.Errorf("field state: %q is not one letter", f[0])
	}
	p.State = f[0][0]
	for i, dst := range []*int{&p.PPID, &p.PGrp, &p.Session} {
		if *dst, err = strconv.Atoi(f[i+1]); err != nil {
			return p, fmt.Errorf("field %s: %q is not a number", [...]string{"ppid", "pgrp", "session"}[i], f[i+1])
		}
	}
	return p, nil
}

// parseNSpid returns the pids of the NSpid line of a /proc/<pid>/status
// file: the process's pid in the PID namespace of the proc mount first, then
// in each nested namespace down to its own.
func parseNSpid(status string) ([]int, error) {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return nil, errors.New("field NSpid: empty")
		}
		pids := make([]int, len(f))
		for i, s := range f {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("field NSpid: %q is not a process id", s)
			}
			pids[i] = n
		}
		return pids, nil
	}
	return nil, errors.New("no NSpid line")
}

// procfs reads processes from a proc mount. The pids it shows (and the
// sessions and groups in its stat lines) are those of the mount's PID
// namespace, which need not be this process's: package isolate mounts its
// namespace's own /proc, but a replay run without it, or a proc mount of an
// outer namespace, would show others; the settler translates through NSpid.
type procfs string

// gone reports whether a read failed because the process went away.
func gone(err error) bool { return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) }

// all returns every process listed (one that ends meanwhile is left out).
func (p procfs) all() ([]procStat, error) {
	ents, err := os.ReadDir(string(p))
	if err != nil {
		return nil, err
	}
	var out []procStat
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		file := filepath.Join(string(p), e.Name(), "stat")
		b, err := os.ReadFile(file)
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st, err := parseStat(strings.TrimSuffix(string(b), "\n"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// nspid returns the NSpid pids of a process by its name in p ("self" or a
// pid of the proc mount's namespace).
func (p procfs) nspid(name string) ([]int, error) {
	file := filepath.Join(string(p), name, "status")
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pids, err := parseNSpid(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return pids, nil
}
