package spawn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/cgroup"
)

// CgroupGuestEnv selects TestCgroupGuest's pass in the kernel matrix's
// cgroup guest (harness/kernels): "delegated" (a cgroup v2 subtree is
// delegated to the test) or "none" (no cgroup2 mount at all).
const CgroupGuestEnv = "DSHSIM_CGROUP_GUEST"

// withDelegation makes the calls of t see d, err as the host's delegation.
func withDelegation(t *testing.T, d cgroup.Delegation, err error) {
	saved := delegation
	delegation = func() (cgroup.Delegation, error) { return d, err }
	t.Cleanup(func() { delegation = saved })
}

// TestAHostWithoutDelegationTakesResourceLimits: this host's delegation,
// as the calls see it; where there is none (a cgroup v1 hybrid host), a
// bounded call is bounded by resource limits and its result names one.
func TestAHostWithoutDelegationTakesResourceLimits(t *testing.T) {
	d, err := delegation()
	var none *cgroup.NoDelegation
	if !errors.As(err, &none) {
		t.Skipf("this host delegates a cgroup v2 subtree (%+v, %v): TestCgroupGuest holds that path", d, err)
	}
	t.Logf("this host: %v", err)
	res, err := Run(context.Background(), Request{Argv: bash("dd bs=1G count=1 if=/dev/zero of=/dev/null"), OutputDir: t.TempDir(),
		Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, Limits: sandbox.Limits{Memory: 256 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "the memory bound (268435456 bytes, RLIMIT_AS)"; res.Bound != want {
		t.Errorf("bound %q, want %q (exit %d, signal %q, stderr %q)", res.Bound, want, res.ExitCode, res.Signal, res.Stderr.Text)
	}
}

// TestADelegationWhoseCgroupCannotBeMadeRefusesTheCall: a delegation
// found whose call cgroup cannot be created (or whose controllers could
// not be enabled) refuses every bounded call: nothing runs unbounded. A
// call without limits needs no cgroup and runs.
func TestADelegationWhoseCgroupCannotBeMadeRefusesTheCall(t *testing.T) {
	ws := varTmpDir(t, "dshsim-cgroup-")
	for _, tc := range []struct {
		name string
		d    cgroup.Delegation
		err  error
	}{
		{"the cgroup cannot be created", cgroup.Delegation{Dir: filepath.Join(ws, "no-such-cgroup")}, nil},
		{"the controllers could not be enabled", cgroup.Delegation{Dir: ws}, errors.New("enable the memory controllers: permission denied")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withDelegation(t, tc.d, tc.err)
			marker := filepath.Join(ws, "ran")
			req := Request{Argv: bash("touch " + marker), OutputDir: t.TempDir(),
				Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, Limits: sandbox.Limits{Memory: 1 << 30}}}
			_, err := Run(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), "refusing to run it unbounded") || !strings.Contains(err.Error(), tc.d.Dir) {
				t.Errorf("Run = %v; want a refusal naming %s", err, tc.d.Dir)
			}
			if _, err := os.Stat(marker); !os.IsNotExist(err) {
				t.Fatalf("the refused call ran (%v)", err)
			}
			req.Policy.Limits = sandbox.Limits{}
			if res, err := Run(context.Background(), req); err != nil || res.ExitCode != 0 {
				t.Fatalf("a call without limits: %+v, %v", res, err)
			}
			os.Remove(marker)
		})
	}
}

// guestSh is a busybox shell command (the guest has busybox alone).
func guestSh(script string) []string { return []string{"/bin/busybox", "sh", "-c", script} }

// TestCgroupGuest runs in the kernel matrix's cgroup guest only (see
// CgroupGuestEnv). Delegated: each bound stops a call past it and its
// result names the cgroup's bound (memory.max: a process killed by the
// kernel; pids.max: forks refused; the CPU time of the whole call), the
// file size is still a resource limit, each call ran in a cgroup of its
// own below the delegated one, and none is left afterwards. None: the same
// calls take resource limits.
func TestCgroupGuest(t *testing.T) {
	pass := os.Getenv(CgroupGuestEnv)
	if pass == "" {
		t.Skip("runs in the kernel matrix's cgroup guest only (harness/kernels: TestCgroupBoundsInAGuest)")
	}
	d, derr := delegation()
	t.Logf("pass %s, uid %d: delegation %+v, %v", pass, os.Getuid(), d, derr)
	type call struct {
		name  string
		l     sandbox.Limits
		argv  []string
		bound string
	}
	memory := guestSh("/bin/busybox dd if=/dev/zero of=/dev/null bs=200M count=1")
	fsize := call{"file size", sandbox.Limits{FileSize: 4096}, guestSh("/bin/busybox head -c 100000 /dev/zero > " + filepath.Join(t.TempDir(), "big")), "the file size bound (4096 bytes, RLIMIT_FSIZE)"}
	var calls []call
	switch pass {
	case "delegated":
		if derr != nil {
			t.Fatalf("no delegation: %v", derr)
		}
		calls = []call{
			{"memory", sandbox.Limits{Memory: 32 << 20}, memory, "the memory bound (33554432 bytes of the call, cgroup memory.max)"},
			{"processes", sandbox.Limits{Processes: 8}, guestSh("i=0; while [ $i -lt 32 ]; do /bin/busybox sleep 1 & i=$((i+1)); done; wait; exit 7"), "the process bound (8 processes and threads of the call, cgroup pids.max)"},
			{"cpu", sandbox.Limits{CPU: 1}, guestSh("while :; do :; done"), "the CPU time bound (1 s of the call, cgroup cpu.stat)"},
			fsize,
			{"within", sandbox.Limits{Memory: 32 << 20, Processes: 8}, guestSh("/bin/busybox cat /proc/self/cgroup"), ""},
		}
	case "none":
		var none *cgroup.NoDelegation
		if !errors.As(derr, &none) {
			t.Fatalf("delegation %+v, %v; want none", d, derr)
		}
		calls = []call{{"memory", sandbox.Limits{Memory: 32 << 20}, memory, "the memory bound (33554432 bytes, RLIMIT_AS)"}, fsize}
	default:
		t.Fatalf("%s=%q: want delegated or none", CgroupGuestEnv, pass)
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			// The timeout ends a call no bound stopped (a bound not set).
			res, err := Run(context.Background(), Request{Argv: c.argv, OutputDir: t.TempDir(), Dir: "/", Timeout: time.Minute,
				Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, Limits: c.l}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Bound != c.bound {
				t.Errorf("bound %q, want %q (exit %d, signal %q, stderr %q)", res.Bound, c.bound, res.ExitCode, res.Signal, res.Stderr.Text)
			}
			if c.name == "within" && !strings.Contains(res.Stdout.Text, "/"+cgroup.Prefix) {
				t.Errorf("the call ran in %q, not in a cgroup of its own", res.Stdout.Text)
			}
			if derr == nil {
				if left, _ := filepath.Glob(filepath.Join(d.Dir, cgroup.Prefix+"*")); len(left) > 0 {
					t.Errorf("the call left its cgroup behind: %q", left)
				}
			}
		})
	}
}
