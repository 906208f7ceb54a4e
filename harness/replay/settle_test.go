package replay

import (
	"testing"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// TestSettledState: only a process that can make no progress on its own
// lets its job count as settled.
func TestSettledState(t *testing.T) {
	for s, want := range map[byte]bool{'S': true, 'T': true, 't': true, 'Z': true, 'X': true, 'R': false, 'D': false, 'I': false, 'W': false} {
		if got := settledState(s); got != want {
			t.Errorf("settledState(%c) = %v, want %v", s, got, want)
		}
	}
}

// TestBusyMember: a busy process counts when its session or its process
// group is a leader's; a busy stranger and a sleeping member do not.
func TestBusyMember(t *testing.T) {
	leaders := map[int]bool{100: true}
	tests := []struct {
		name  string
		procs []procfs.Stat
		want  int // busy pid, 0 for none
	}{
		{"sleeping members", []procfs.Stat{{PID: 100, State: 'S', PGrp: 100, Session: 100}, {PID: 101, State: 'S', PGrp: 100, Session: 100}}, 0},
		{"busy by session", []procfs.Stat{{PID: 101, State: 'R', PGrp: 101, Session: 100}}, 101},
		{"busy by group", []procfs.Stat{{PID: 102, State: 'D', PGrp: 100, Session: 7}}, 102},
		{"busy stranger", []procfs.Stat{{PID: 200, State: 'R', PGrp: 200, Session: 200}}, 0},
		{"zombie member", []procfs.Stat{{PID: 103, State: 'Z', PGrp: 100, Session: 100}}, 0},
	}
	for _, tt := range tests {
		p, ok := busyMember(tt.procs, leaders)
		if got := map[bool]int{true: p.PID}[ok]; got != tt.want {
			t.Errorf("%s: busy %d (%v), want %d", tt.name, got, ok, tt.want)
		}
	}
}

func TestPidAt(t *testing.T) {
	ns := []int{812, 23, 1}
	for _, tt := range []struct {
		level int
		want  int
		ok    bool
	}{{0, 812, true}, {2, 1, true}, {3, 0, false}, {-1, 0, false}} {
		if got, ok := pidAt(ns, tt.level); got != tt.want || ok != tt.ok {
			t.Errorf("pidAt(%v, %d) = %d, %v; want %d, %v", ns, tt.level, got, ok, tt.want, tt.ok)
		}
	}
}
