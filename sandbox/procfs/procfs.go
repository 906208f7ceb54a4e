package procfs

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

// Stat is what a /proc/<pid>/stat line says of a process (or of a thread,
// read from /proc/<pid>/task/<tid>/stat).
type Stat struct {
	PID     int
	Comm    string
	State   byte // R, S, D, Z, T, t, X, ...
	PPID    int
	PGrp    int
	Session int
	// UTime and STime are the CPU time spent in user and kernel mode, in
	// clock ticks ([ClockTicksPerSecond]).
	UTime, STime int64
}

// ClockTicksPerSecond is USER_HZ, the unit of the CPU times of a stat line
// (100 on Linux).
const ClockTicksPerSecond = 100

func (s Stat) String() string {
	return fmt.Sprintf("pid %d (%s) state %c", s.PID, s.Comm, s.State)
}

// Ended reports whether the process has ended: a zombie waiting to be
// reaped (Z) or dead (X). It runs nothing any more.
func (s Stat) Ended() bool { return s.State == 'Z' || s.State == 'X' }

// statFields names the fields a stat line must have after (comm), in
// order; the rest of the line is not read.
var statFields = [...]string{"state", "ppid", "pgrp", "session", "tty_nr", "tpgid", "flags", "minflt", "cminflt", "majflt", "cmajflt", "utime", "stime"}

// ParseStat parses a /proc/<pid>/stat line (a trailing newline is allowed).
// comm may hold spaces and parentheses: it runs from the first '(' to the
// line's last ')'.
func ParseStat(line string) (Stat, error) {
	var s Stat
	line = strings.TrimSuffix(line, "\n")
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return s, errors.New("no (comm) field")
	}
	pid, ok := strings.CutSuffix(line[:open], " ")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 {
		return s, fmt.Errorf("field pid: %q is not a process id followed by one space", line[:open])
	}
	s.PID, s.Comm = n, line[open+1:end]
	f := strings.Fields(line[end+1:])
	if len(f) < len(statFields) {
		return s, fmt.Errorf("%d fields after (comm), want at least %d (%s ... %s)", len(f), len(statFields), statFields[0], statFields[len(statFields)-1])
	}
	if len(f[0]) != 1 {
		return s, fmt.Errorf("field state: %q is not one letter", f[0])
	}
	s.State = f[0][0]
	for i, dst := range []*int{&s.PPID, &s.PGrp, &s.Session} {
		if *dst, err = strconv.Atoi(f[i+1]); err != nil {
			return s, fmt.Errorf("field %s: %q is not a number", statFields[i+1], f[i+1])
		}
	}
	for i, dst := range []*int64{&s.UTime, &s.STime} {
		k := 11 + i
		if *dst, err = strconv.ParseInt(f[k], 10, 64); err != nil || *dst < 0 {
			return s, fmt.Errorf("field %s: %q is not a tick count", statFields[k], f[k])
		}
	}
	return s, nil
}

// ParseStatus returns the "Name:\tvalue" fields of a /proc/<pid>/status
// text, each value without its surrounding blanks ("CapEff" ->
// "000001ffffffffff", "VmRSS" -> "2048 kB"). A line without a colon is
// not a field.
func ParseStatus(status string) map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(status) {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// ParseNSpid returns the pids of the NSpid line of a /proc/<pid>/status
// text: the process's pid in the PID namespace of the proc mount first, then
// in each nested namespace down to its own. A process that is exiting shows
// pids of 0: its error is one [Gone] reports.
func ParseNSpid(status string) ([]int, error) {
	v, ok := ParseStatus(status)["NSpid"]
	if !ok {
		return nil, errors.New("no NSpid line")
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return nil, errors.New("field NSpid: empty")
	}
	pids := make([]int, len(f))
	for i, s := range f {
		n, err := strconv.Atoi(s)
		switch {
		case err == nil && n == 0:
			return nil, errExiting
		case err != nil || n < 0:
			return nil, fmt.Errorf("field NSpid: %q is not a process id", s)
		}
		pids[i] = n
	}
	return pids, nil
}

// errExiting is an NSpid line of a process whose pid the kernel already
// released: it is exiting, and the kernel writes 0 for its pids. [Gone]
// reports it.
var errExiting = fmt.Errorf("field NSpid: 0, the process is exiting: %w", syscall.ESRCH)

// Root is the directory of a proc mount. The pids it shows (and the
// sessions and groups of its stat lines) are those of the mount's PID
// namespace, which need not be the reader's.
type Root string

// Proc is the host's proc mount.
const Proc Root = "/proc"

// Gone reports whether a read failed because the process went away.
func Gone(err error) bool { return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) }

// readStat reads and parses the stat file at rel under r; a parse error
// names the file.
func (r Root) readStat(rel ...string) (Stat, error) {
	file := filepath.Join(append([]string{string(r)}, rel...)...)
	b, err := os.ReadFile(file)
	if err != nil {
		return Stat{}, err
	}
	s, err := ParseStat(string(b))
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// Stat returns the stat line of process pid.
func (r Root) Stat(pid int) (Stat, error) { return r.readStat(strconv.Itoa(pid), "stat") }

// ThreadStat returns the stat line of thread tid of process pid (the main
// thread's tid is pid).
func (r Root) ThreadStat(pid, tid int) (Stat, error) {
	return r.readStat(strconv.Itoa(pid), "task", strconv.Itoa(tid), "stat")
}

// All returns the stat lines of every process listed; a process that ends
// meanwhile is left out. A line that does not parse is left out too, and
// the returned error names its file (nil when every one parsed), so a caller
// decides whether a garbled /proc is fatal. The lines are read relative to
// one descriptor of r, into one buffer ([statReader]): the executor reads
// every process's after each call.
func (r Root) All() ([]Stat, error) {
	dir, err := os.Open(string(r))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	rd := statReader{dir: int(dir.Fd())}
	var out []Stat
	var bad []error
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err != nil || pid <= 0 {
			continue
		}
		line, err := rd.read(name + "/stat")
		var s Stat
		if err == nil {
			if s, err = ParseStat(line); err != nil {
				err = fmt.Errorf("%s: %w", filepath.Join(string(r), name, "stat"), err)
			}
		}
		switch {
		case Gone(err):
		case err != nil:
			bad = append(bad, err)
		default:
			out = append(out, s)
		}
	}
	return out, errors.Join(bad...)
}

// statReader reads small files relative to a directory descriptor into one
// buffer ([readAt]).
type statReader struct {
	dir int
	buf []byte
}

// read returns the text of the file at rel under r.dir.
func (r *statReader) read(rel string) (string, error) {
	if r.buf == nil {
		r.buf = make([]byte, 1024)
	}
	b, err := readAt(r.dir, rel, r.buf)
	if err != nil {
		return "", err
	}
	r.buf = b[:cap(b)]
	return string(b), nil
}

// Status returns the status text of a process by its name under r ("self",
// a pid of the mount's namespace, or "self/task/<tid>" for a thread), for
// [ParseStatus].
func (r Root) Status(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(string(r), name, "status"))
	return string(b), err
}

// NSpid returns the NSpid pids of a process by its name under r ("self" or
// a pid of the mount's namespace).
func (r Root) NSpid(name string) ([]int, error) {
	status, err := r.Status(name)
	if err != nil {
		return nil, err
	}
	pids, err := ParseNSpid(status)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(string(r), name, "status"), err)
	}
	return pids, nil
}

// Alive reports whether process pid (of this process's PID namespace)
// exists and has not ended: neither a zombie nor dead. It is the outside
// check that a run left nothing running.
func Alive(pid int) bool {
	s, err := Proc.Stat(pid)
	return err == nil && !s.Ended()
}

// Environ returns the environment a process started with
// (/proc/<pid>/environ: NUL-separated "NAME=value" entries), as far as this
// process may read it.
func (r Root) Environ(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(string(r), strconv.Itoa(pid), "environ"))
	if err != nil {
		return nil, err
	}
	return ParseEnviron(string(b)), nil
}

// ParseEnviron splits a /proc/<pid>/environ text into its entries: each
// ends with a NUL (the last one may not); empty entries are dropped.
func ParseEnviron(text string) []string {
	var out []string
	for _, e := range strings.Split(text, "\x00") {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

// ParseLastPID returns the last field of a /proc/loadavg text ("0.41 0.30
// 0.25 2/190 41235"): the process id most recently handed out.
func ParseLastPID(loadavg string) (int, error) {
	f := strings.Fields(loadavg)
	if len(f) != 5 {
		return 0, fmt.Errorf("%d fields, want 5 (three load averages, running/total, the last pid)", len(f))
	}
	pid, err := strconv.Atoi(f[4])
	if err != nil || pid < 0 {
		return 0, fmt.Errorf("field last pid: %q is not a process id", f[4])
	}
	return pid, nil
}

// LastPID returns the process id most recently handed out in the PID
// namespace of the process reading r's loadavg (the reader's, whatever
// proc mount r is). The kernel hands ids out in a cycle and moves this on
// every process or thread created in that namespace or one nested in it;
// only a process holding CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN over the
// namespace can place an id without moving it (clone3's set_tid,
// ns_last_pid).
func (r Root) LastPID() (int, error) {
	b, err := os.ReadFile(string(r) + "/loadavg")
	if err != nil {
		return 0, err
	}
	pid, err := ParseLastPID(string(b))
	if err != nil {
		return 0, fmt.Errorf("%s/loadavg: %w", r, err)
	}
	return pid, nil
}
