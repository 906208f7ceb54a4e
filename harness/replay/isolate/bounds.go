package isolate

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dshsim/dshsim/harness/cmdline"
)

// Bounds are the resource bounds of one contained run. Each is a resource
// limit (setrlimit) the run stage sets on itself before anything of the run
// starts, inherited by every process it starts; where the host delegates a
// cgroup v2 subtree, Memory and Tasks also bound the whole run in a cgroup
// of its own (see the package doc):
//
//   - Memory: the data one process may map (RLIMIT_DATA: its heap and
//     private writable mappings, which is what an allocation takes; address
//     space merely reserved, as V8 and Go reserve it, does not count);
//   - Tasks: the processes and threads of the run together (RLIMIT_NPROC,
//     which the kernel counts per user in each user namespace: the run
//     stage's namespace is the run's own, so every task of the run counts
//     and nothing else does);
//   - FileSize: the size one file may grow to (RLIMIT_FSIZE; the private
//     /tmp bounds all files together);
//   - CPU: the CPU time of one process (RLIMIT_CPU; the replay's -timeout
//     bounds the wall time of the whole run).
//
// A zero field takes its default ([DefaultBounds]).
type Bounds struct {
	Memory   int64         `json:"memory"`
	Tasks    int           `json:"tasks"`
	FileSize int64         `json:"fileSize"`
	CPU      time.Duration `json:"cpu"`
}

// DefaultBounds are the bounds of a run that names none: far above what a
// replay or a recording session takes (the run stage itself, a replay's Go
// process, holds a few hundred MiB at most), far below a host's capacity.
var DefaultBounds = Bounds{Memory: 2 << 30, Tasks: 1024, FileSize: DefaultTmpSize, CPU: 10 * time.Minute}

// MinMemory is the least memory bound a run may have: a Go process (the
// run stage) cannot start with less.
const MinMemory = 256 << 20

// MinTasks is the fewest tasks a run may have: the run stage's own threads.
const MinTasks = 32

// withDefaults fills b's zero fields from [DefaultBounds].
func (b Bounds) withDefaults() Bounds {
	d := DefaultBounds
	if b.Memory != 0 {
		d.Memory = b.Memory
	}
	if b.Tasks != 0 {
		d.Tasks = b.Tasks
	}
	if b.FileSize != 0 {
		d.FileSize = b.FileSize
	}
	if b.CPU != 0 {
		d.CPU = b.CPU
	}
	return d
}

// Check says what is wrong with b (after defaults): a bound below what
// the run stage itself needs, or a negative one. Pure.
func (b Bounds) Check() error {
	b = b.withDefaults()
	switch {
	case b.Memory < MinMemory:
		return fmt.Errorf("a memory bound (-memory) of %s: want at least %s (the run stage is a Go process)", Size(b.Memory), Size(MinMemory))
	case b.Tasks < MinTasks:
		return fmt.Errorf("a bound (-processes) of %d processes and threads: want at least %d (the run stage's own threads)", b.Tasks, MinTasks)
	case b.FileSize <= 0:
		return fmt.Errorf("a file size bound (-file-size) of %d bytes: want a positive size", b.FileSize)
	case b.CPU < time.Second:
		return fmt.Errorf("a CPU time bound (-cpu-time) of %v: want at least 1s", b.CPU)
	}
	return nil
}

// Names of the bounds, as results name the one that stopped a run.
const (
	BoundMemory   = "memory bound"
	BoundTasks    = "process bound"
	BoundFileSize = "file size bound"
	BoundCPU      = "CPU time bound"
)

// Name is how a result names bound (one of the Bound* names) of b:
// "memory bound 2 GiB per process" and so on. Pure.
func (b Bounds) Name(bound string) string {
	b = b.withDefaults()
	switch bound {
	case BoundMemory:
		return bound + " " + Size(b.Memory) + " per process"
	case BoundTasks:
		return bound + " " + strconv.Itoa(b.Tasks) + " processes and threads"
	case BoundFileSize:
		return bound + " " + Size(b.FileSize) + " per file"
	case BoundCPU:
		return bound + " " + b.CPU.String() + " per process"
	}
	return bound
}

// String lists b's bounds on one line. Pure.
func (b Bounds) String() string {
	return strings.Join([]string{b.Name(BoundMemory), b.Name(BoundTasks), b.Name(BoundFileSize), b.Name(BoundCPU)}, ", ")
}

// Size spells n bytes in the largest binary unit that divides it ("2 GiB",
// "512 MiB", "4 KiB", "1000 bytes"). Pure.
func Size(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Register adds a flag for each bound to fs, parsing into b (whose current
// values are the defaults shown): -memory, -processes, -file-size and
// -cpu-time.
func (b *Bounds) Register(fs *flag.FlagSet) {
	*b = b.withDefaults()
	fs.Var((*cmdline.ByteSize)(&b.Memory), "memory", "memory bound per process (per run in a cgroup), in `bytes`")
	fs.IntVar(&b.Tasks, "processes", b.Tasks, "processes and threads of a contained run, all together")
	fs.Var((*cmdline.ByteSize)(&b.FileSize), "file-size", "size bound of a file a contained run writes, in `bytes`")
	fs.DurationVar(&b.CPU, "cpu-time", b.CPU, "CPU time bound of each contained process")
}

// rlimit is one resource limit a run stage sets on itself.
type rlimit struct {
	resource   int
	soft, hard uint64
}

// rlimits are the resource limits b sets: each hard limit equal to its
// soft one (nothing of the run may raise it again), but the CPU time's one
// second higher, so that a process past it gets SIGXCPU before SIGKILL.
func (b Bounds) rlimits() []rlimit {
	b = b.withDefaults()
	cpu := uint64((b.CPU + time.Second - 1) / time.Second)
	return []rlimit{
		{syscall.RLIMIT_DATA, uint64(b.Memory), uint64(b.Memory)},
		{rlimitNproc, uint64(b.Tasks), uint64(b.Tasks)},
		{syscall.RLIMIT_FSIZE, uint64(b.FileSize), uint64(b.FileSize)},
		{syscall.RLIMIT_CPU, cpu, cpu + 1},
	}
}

// within is l under a hard limit the caller already has (which nothing
// without CAP_SYS_RESOURCE may raise): a stricter limit stays as it is.
// Pure.
func (l rlimit) within(hard uint64) rlimit {
	l.soft, l.hard = min(l.soft, hard), min(l.hard, hard)
	return l
}

// rlimitNproc is RLIMIT_NPROC (syscall names it on no architecture).
const rlimitNproc = 6

// ending is how the run stage ended, as PID 1 saw it.
type ending struct {
	// Exited and Code: it exited with Code; else Signal killed it.
	Exited bool
	Code   int
	Signal syscall.Signal
	// Stopped is the signal that stopped it (PID 1 then killed it), 0 if none.
	Stopped syscall.Signal
	// CPU is the CPU time it used; Data the most data it was seen to map
	// (VmData, bytes, sampled while it ran).
	CPU  time.Duration
	Data int64
	// Tail is what the Go runtime wrote to its stderr as it died (tee).
	Tail string
}

// boundHit names the bound of b that explains e, "" when none does: a
// process killed by SIGXCPU, or by SIGKILL past its CPU time (the hard
// limit), hit the CPU bound; one killed by SIGXFSZ the file size bound; a
// Go run stage that crashed (exit status 2, or SIGABRT from cgo) saying it
// was out of memory or could not allocate it, or seen mapping seven
// eighths of the bound or more (the runtime may crash elsewhere when an
// allocation of its own fails), the memory bound, and one that could not
// create a thread the process bound. Pure.
func boundHit(b Bounds, e ending) string {
	b = b.withDefaults()
	crashed := e.Exited && e.Code == 2 || !e.Exited && e.Signal == syscall.SIGABRT
	switch {
	case e.Stopped != 0:
		return ""
	case !e.Exited && (e.Signal == syscall.SIGXCPU || e.Signal == syscall.SIGKILL && e.CPU >= b.CPU):
		return b.Name(BoundCPU)
	case !e.Exited && e.Signal == syscall.SIGXFSZ:
		return b.Name(BoundFileSize)
	case crashed && (strings.Contains(e.Tail, "out of memory") || strings.Contains(e.Tail, "cannot allocate memory") || e.Data >= b.Memory/8*7):
		return b.Name(BoundMemory)
	case crashed && (strings.Contains(e.Tail, "failed to create new OS thread") || strings.Contains(e.Tail, "pthread_create failed")):
		return b.Name(BoundTasks)
	}
	return ""
}

// fatalLine is the Go runtime's fatal error in tail ("fatal error: ..." or
// "runtime/cgo: ..."), the first, "" when there is none. Pure.
func fatalLine(tail string) string {
	for line := range strings.Lines(tail) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "fatal error: ") || strings.HasPrefix(line, "runtime/cgo: ") {
			const max = 200
			if len(line) > max {
				line = line[:max] + "..."
			}
			return line
		}
	}
	return ""
}

// describe says how the run stage ended, naming the bound of b it hit. Pure.
func (e ending) describe(b Bounds) string {
	var what string
	switch {
	case e.Stopped != 0:
		what = fmt.Sprintf("was stopped (%v) and killed: something it ran signalled it", e.Stopped)
	case e.Exited:
		what = fmt.Sprintf("exited with status %d", e.Code)
	default:
		what = fmt.Sprintf("was killed (%v)", e.Signal)
	}
	if fatal := fatalLine(e.Tail); fatal != "" && e.Stopped == 0 {
		what += " (" + fatal + ")"
	}
	if hit := boundHit(b, e); hit != "" {
		what += ": it reached its " + hit
	}
	return what
}
