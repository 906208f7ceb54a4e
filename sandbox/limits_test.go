package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func TestLimitsRlimits(t *testing.T) {
	for _, tc := range []struct {
		l    Limits
		want []Rlimit
	}{
		{Limits{}, nil},
		{Limits{Memory: 1 << 30}, []Rlimit{{unix.RLIMIT_AS, 1 << 30, 1 << 30}}},
		{Limits{CPU: 5}, []Rlimit{{unix.RLIMIT_CPU, 5, 6}}},
		{Limits{Memory: 1, Processes: 2, FileSize: 3, CPU: 4}, []Rlimit{{unix.RLIMIT_AS, 1, 1}, {unix.RLIMIT_NPROC, 2, 2}, {unix.RLIMIT_FSIZE, 3, 3}, {unix.RLIMIT_CPU, 4, 5}}},
	} {
		if d := cmp.Diff(tc.want, tc.l.Rlimits()); d != "" {
			t.Errorf("%+v.Rlimits() (-want +got):\n%s", tc.l, d)
		}
	}
}

func TestLimitsBound(t *testing.T) {
	all := Limits{Memory: 100, Processes: 7, FileSize: 1000, CPU: 2}
	for _, tc := range []struct {
		name   string
		l      Limits
		signal string
		cpu    float64
		exit   int
		stderr string
		want   string
	}{
		{"SIGXCPU is the CPU bound", all, "SIGXCPU", 2, -1, "", "the CPU time bound (2 s, RLIMIT_CPU)"},
		{"SIGKILL at the CPU bound", all, "SIGKILL", 2, -1, "", "the CPU time bound (2 s, RLIMIT_CPU)"},
		{"SIGKILL before the CPU bound is not it", all, "SIGKILL", 1.99, -1, "", ""},
		{"no CPU bound, no CPU verdict", Limits{}, "SIGXCPU", 9, -1, "", ""},
		{"a child's SIGXCPU through bash or bwrap", all, "", 2.5, 152, "", "the CPU time bound (2 s, RLIMIT_CPU)"},
		{"exit 152 without a CPU bound is not it", Limits{Memory: 1}, "", 9, 152, "", ""},
		{"dd's words with a memory bound", all, "", 0, 1, "dd: memory exhausted by input buffer of size 1073741824 bytes (1.0 GiB)", "the memory bound (100 bytes, RLIMIT_AS)"},
		{"SIGXFSZ is the file size bound", all, "SIGXFSZ", 0, -1, "", "the file size bound (1000 bytes, RLIMIT_FSIZE)"},
		{"a child's SIGXFSZ through bash", all, "", 0, 153, "bash: line 1: 7 File size limit exceeded head -c 100000 /dev/zero > big", "the file size bound (1000 bytes, RLIMIT_FSIZE)"},
		{"exit 153 without the words is not it", all, "", 0, 153, "", ""},
		{"no file size bound", Limits{CPU: 1}, "SIGXFSZ", 0, -1, "", ""},
		{"another signal", all, "SIGTERM", 0, -1, "Cannot allocate memory", ""},
		{"an allocation failure with a memory bound", all, "", 0, 1, "bash: xrealloc: cannot allocate 4096 bytes", "the memory bound (100 bytes, RLIMIT_AS)"},
		{"out of memory with a memory bound", all, "", 0, 134, "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "the memory bound (100 bytes, RLIMIT_AS)"},
		{"an allocation failure without one", Limits{CPU: 1}, "", 0, 1, "cannot allocate memory", ""},
		{"a failed fork with a process bound", all, "", 0, 1, "bash: fork: retry: Resource temporarily unavailable", "the process bound (7 processes and threads of the user, RLIMIT_NPROC)"},
		{"a clean exit names nothing", all, "", 0, 0, "Cannot allocate memory", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.l.Bound(tc.signal, tc.cpu, tc.exit, tc.stderr); got != tc.want {
				t.Errorf("Bound = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLimitsGroupBound: the bound a call's cgroup names, from its events
// and how the call ended; a bound not set is never named, and a call that
// succeeded names none (a refused fork it survived is not what stopped it).
func TestLimitsGroupBound(t *testing.T) {
	all := Limits{Memory: 1 << 20, Processes: 8, FileSize: 4096, CPU: 2}
	const (
		mem  = "the memory bound (1048576 bytes of the call, cgroup memory.max)"
		pids = "the process bound (8 processes and threads of the call, cgroup pids.max)"
		cpu  = "the CPU time bound (2 s of the call, cgroup cpu.stat)"
		fsz  = "the file size bound (4096 bytes, RLIMIT_FSIZE)"
	)
	for _, tc := range []struct {
		name   string
		l      Limits
		ev     GroupEvents
		signal string
		exit   int
		stderr string
		want   string
	}{
		{"killed past memory.max", all, GroupEvents{OOMKills: 1}, "SIGKILL", -1, "", mem},
		{"a child killed past memory.max, the call failed", all, GroupEvents{OOMKills: 1}, "", 137, "", mem},
		{"a child killed, the call succeeded", all, GroupEvents{OOMKills: 1}, "", 0, "", ""},
		{"forks refused past pids.max", all, GroupEvents{PidsMax: 3}, "", 2, "sh: can't fork", pids},
		{"forks refused, the call succeeded", all, GroupEvents{PidsMax: 3}, "", 0, "", ""},
		{"the CPU time of the call", all, GroupEvents{CPUKilled: true, OOMKills: 1}, "SIGKILL", -1, "", cpu},
		{"memory and processes: memory first", all, GroupEvents{OOMKills: 1, PidsMax: 1}, "SIGKILL", -1, "", mem},
		{"the file size, a resource limit still", all, GroupEvents{}, "SIGXFSZ", -1, "", fsz},
		{"a failure no bound explains", all, GroupEvents{}, "", 1, "cannot allocate memory", ""},
		{"a SIGKILL no bound explains", all, GroupEvents{}, "SIGKILL", -1, "", ""},
		{"memory.max not set", Limits{Processes: 8}, GroupEvents{OOMKills: 1}, "SIGKILL", -1, "", ""},
		{"pids.max not set", Limits{Memory: 1 << 20}, GroupEvents{PidsMax: 1}, "", 2, "", ""},
		{"no CPU bound", Limits{Memory: 1 << 20}, GroupEvents{CPUKilled: true}, "SIGKILL", -1, "", ""},
	} {
		if got := tc.l.GroupBound(tc.ev, tc.signal, tc.exit, tc.stderr); got != tc.want {
			t.Errorf("%s: GroupBound = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got, want := all.GroupPart(), (Limits{FileSize: 4096}); got != want {
		t.Errorf("GroupPart = %+v, want %+v", got, want)
	}
}
