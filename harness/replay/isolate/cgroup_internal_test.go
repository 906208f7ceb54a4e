package isolate

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/cgroup"
)

// TestGroupHit: the bound a run's cgroup names, from its events.
func TestGroupHit(t *testing.T) {
	b := Bounds{Memory: 512 << 20, Tasks: 64}
	for _, tc := range []struct {
		ev   sandbox.GroupEvents
		want string
	}{
		{sandbox.GroupEvents{OOMKills: 1}, "memory bound 512 MiB of the whole run (cgroup memory.max)"},
		{sandbox.GroupEvents{PidsMax: 2}, "process bound 64 processes and threads of the whole run (cgroup pids.max)"},
		{sandbox.GroupEvents{OOMKills: 1, PidsMax: 2}, "memory bound 512 MiB of the whole run (cgroup memory.max)"},
		{sandbox.GroupEvents{}, ""},
		{sandbox.GroupEvents{CPUKilled: true}, ""},
	} {
		if got := groupHit(b, tc.ev); got != tc.want {
			t.Errorf("groupHit(%+v) = %q, want %q", tc.ev, got, tc.want)
		}
	}
	if got, want := groupHit(Bounds{}, sandbox.GroupEvents{OOMKills: 1}), "memory bound 2 GiB of the whole run (cgroup memory.max)"; got != want {
		t.Errorf("with the default bounds: %q, want %q", got, want)
	}
}

// TestARunWhoseCgroupCannotBeMadeIsRefused: a delegation found whose run
// cgroup cannot be made (or whose controllers could not be enabled)
// refuses the run before any child starts: it never runs unbounded.
func TestARunWhoseCgroupCannotBeMadeIsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		d   cgroup.Delegation
		err error
	}{
		{cgroup.Delegation{Dir: filepath.Join(dir, "no-such-cgroup")}, nil},
		{cgroup.Delegation{Dir: dir}, errors.New("enable the memory controllers: permission denied")},
	} {
		saved := delegation
		delegation = func() (cgroup.Delegation, error) { return tc.d, tc.err }
		started := false
		_, err := start(context.Background(), mode(0), "no-such-handler", nil, Options{Stderr: &startWatch{&started}})
		delegation = saved
		if err == nil || !strings.Contains(err.Error(), "refusing to run it unbounded") || !strings.Contains(err.Error(), tc.d.Dir) {
			t.Errorf("start = %v; want a refusal naming %s", err, tc.d.Dir)
		}
		if started {
			t.Errorf("a child started and wrote")
		}
	}
}

// startWatch records that anything was written (a child's stderr).
type startWatch struct{ wrote *bool }

func (w *startWatch) Write(b []byte) (int, error) { *w.wrote = true; return len(b), nil }
