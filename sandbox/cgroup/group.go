package cgroup

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dshsim/dshsim/sandbox"
)

// Prepare enables d.Enable in d.Dir's cgroup.subtree_control (nothing when
// they are enabled already), so that the cgroups [Delegation.New] makes
// have the controllers.
func (d Delegation) Prepare() error {
	if len(d.Enable) == 0 {
		return nil
	}
	f := filepath.Join(d.Dir, "cgroup.subtree_control")
	if err := write(f, "+"+strings.Join(d.Enable, " +")); err != nil {
		return fmt.Errorf("enable the %s controllers: %w", strings.Join(d.Enable, " and "), err)
	}
	return nil
}

// Prefix begins the name of every cgroup [Delegation.New] makes.
const Prefix = "dshsim-call-"

// Group is one call's cgroup: a fresh child of the delegated cgroup with
// the call's bounds, which the call's first process joins as it is created
// ([Group.FD] as clone3's CLONE_INTO_CGROUP, Go's
// syscall.SysProcAttr.UseCgroupFD), and whatever it starts is in it.
type Group struct {
	dir      string
	fd       *os.File
	stop     chan struct{}
	stopOnce sync.Once
	watching sync.WaitGroup
	cpuHit   atomic.Bool
}

// New makes a cgroup for one call under d.Dir, bounded by l: memory.max
// (and memory.swap.max 0, where the kernel has swap accounting: the bound
// is not moved to swap), pids.max, and the CPU time of the whole cgroup,
// read from cpu.stat every [Tick]: at the bound every process in it is
// killed. A zero field sets nothing. l.FileSize is not a cgroup's: the
// caller sets it as a resource limit. On any error nothing is left behind.
func (d Delegation) New(l sandbox.Limits) (*Group, error) {
	var rnd [6]byte
	rand.Read(rnd[:])
	dir := filepath.Join(d.Dir, Prefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create a cgroup for the call: %w", err)
	}
	g := &Group{dir: dir, stop: make(chan struct{})}
	if err := g.bound(l); err != nil {
		os.Remove(dir)
		return nil, err
	}
	fd, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("open the call's cgroup: %w", err)
	}
	g.fd = fd
	if l.CPU > 0 {
		g.watching.Add(1)
		go g.watchCPU(time.Duration(l.CPU) * time.Second)
	}
	return g, nil
}

// bound writes l's bounds into g's files.
func (g *Group) bound(l sandbox.Limits) error {
	var set [][2]string
	if l.Memory > 0 {
		set = append(set, [2]string{"memory.max", strconv.FormatUint(l.Memory, 10)})
		if _, err := os.Stat(filepath.Join(g.dir, "memory.swap.max")); err == nil {
			set = append(set, [2]string{"memory.swap.max", "0"})
		}
	}
	if l.Processes > 0 {
		set = append(set, [2]string{"pids.max", strconv.FormatUint(l.Processes, 10)})
	}
	for _, s := range set {
		if err := write(filepath.Join(g.dir, s[0]), s[1]); err != nil {
			return fmt.Errorf("bound the call's cgroup: %w", err)
		}
	}
	return nil
}

// Dir is the cgroup's directory.
func (g *Group) Dir() string { return g.dir }

// FD is the cgroup's directory descriptor, for CLONE_INTO_CGROUP.
func (g *Group) FD() int { return int(g.fd.Fd()) }

// Tick is how often the CPU time of a call's cgroup is read.
const Tick = 20 * time.Millisecond

// watchCPU kills every process of g once its CPU time (cpu.stat's
// usage_usec) reaches bound, until g is closed.
func (g *Group) watchCPU(bound time.Duration) {
	defer g.watching.Done()
	t := time.NewTicker(Tick)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		used, err := stat(filepath.Join(g.dir, "cpu.stat"), "usage_usec")
		if err == nil && time.Duration(used)*time.Microsecond >= bound {
			g.cpuHit.Store(true)
			g.kill()
			return
		}
	}
}

// Events are what g recorded: see [sandbox.GroupEvents]. A file that
// cannot be read counts nothing.
func (g *Group) Events() sandbox.GroupEvents {
	oom, _ := stat(filepath.Join(g.dir, "memory.events"), "oom_kill")
	pids, _ := stat(filepath.Join(g.dir, "pids.events"), "max")
	return sandbox.GroupEvents{OOMKills: oom, PidsMax: pids, CPUKilled: g.cpuHit.Load()}
}

// kill kills every process in g: cgroup.kill where the kernel has it
// (5.14), else each pid of cgroup.procs, again until none is left.
func (g *Group) kill() {
	if write(filepath.Join(g.dir, "cgroup.kill"), "1") == nil {
		return
	}
	for range 100 {
		pids, err := fields(filepath.Join(g.dir, "cgroup.procs"))
		if err != nil || len(pids) == 0 {
			return
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(Tick)
	}
}

// Close stops the CPU watch, kills whatever of the call is left in g,
// waits for it to be gone and removes g. The error says what is left.
func (g *Group) Close() error {
	g.stopOnce.Do(func() { close(g.stop) })
	g.watching.Wait()
	defer g.fd.Close()
	var err error
	for range 250 { // 5 s
		if populated, _ := stat(filepath.Join(g.dir, "cgroup.events"), "populated"); populated > 0 {
			g.kill()
		}
		if err = os.Remove(g.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(Tick)
	}
	return fmt.Errorf("remove the call's cgroup: %w", err)
}

// stat is the value of key in a flat-keyed cgroup file ("key value" lines).
func stat(file, key string) (uint64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && k == key {
			return strconv.ParseUint(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s", file, key)
}

// write writes s to a cgroup file, which exists (no create).
func write(file, s string) error {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(s)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write %q to %s: %w", s, file, werr)
	}
	return nil
}
