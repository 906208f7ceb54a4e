package isolate

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/cgroup"
)

// delegation is the cgroup v2 subtree runs are bounded in
// (cgroup.Delegated; a test replaces it).
var delegation = cgroup.Delegated

// inCgroup makes the run's cgroup where the host delegates a cgroup v2
// subtree to this process, bounded by b for the whole run (memory.max
// b.Memory, pids.max b.Tasks; the resource limits stay, per process), and
// has the child started with attr created in it (CLONE_INTO_CGROUP).
// named adds to a failed run's error the cgroup bound that explains it;
// done removes the cgroup once the child ended. Without a delegation both
// do nothing. A delegation whose cgroup cannot be made refuses the run.
func inCgroup(attr *syscall.SysProcAttr, b Bounds) (named func(error) error, done func(), err error) {
	d, err := delegation()
	var none *cgroup.NoDelegation
	if errors.As(err, &none) {
		return func(err error) error { return err }, func() {}, nil
	}
	var g *cgroup.Group
	if err == nil {
		g, err = d.New(sandbox.Limits{Memory: uint64(b.Memory), Processes: uint64(b.Tasks)})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("isolate: the host delegates the cgroup %s to this process, but the run's cgroup cannot be made there (%v); refusing to run it unbounded", d.Dir, err)
	}
	attr.UseCgroupFD, attr.CgroupFD = true, g.FD()
	named = func(err error) error {
		if hit := groupHit(b, g.Events()); hit != "" {
			return fmt.Errorf("%w: the run's cgroup stopped a process of it at its %s", err, hit)
		}
		return err
	}
	return named, func() { g.Close() }, nil
}

// groupHit names the bound of b (defaults filled in) that the run's
// cgroup events explain: a process killed past memory.max, or a fork or
// clone refused past pids.max. "" when none. Pure.
func groupHit(b Bounds, ev sandbox.GroupEvents) string {
	b = b.withDefaults()
	switch {
	case ev.OOMKills > 0:
		return BoundMemory + " " + Size(b.Memory) + " of the whole run (cgroup memory.max)"
	case ev.PidsMax > 0:
		return BoundTasks + " " + strconv.Itoa(b.Tasks) + " processes and threads of the whole run (cgroup pids.max)"
	}
	return ""
}
