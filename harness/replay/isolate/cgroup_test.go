package isolate_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/sandbox/cgroup"
)

func init() { isolate.Serve("test-cgroup", cgroupHandler) }

// cgroupHandler answers "where" with the run's /proc/self/cgroup, and for
// "memory" runs two busybox dd, each holding 150 MiB (under the
// per-process bound of 256 MiB, together past the run's), and fails when
// either was stopped.
func cgroupHandler(ctx context.Context, req []byte) ([]byte, error) {
	switch string(req) {
	case "where":
		return os.ReadFile("/proc/self/cgroup")
	case "memory":
		var cmds []*exec.Cmd
		for range 2 {
			cmd := exec.CommandContext(ctx, "/bin/busybox", "dd", "if=/dev/zero", "of=/dev/null", "bs=150M", "count=40")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			cmds = append(cmds, cmd)
		}
		var errs []error
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				errs = append(errs, fmt.Errorf("dd: %w", err))
			}
		}
		return []byte("both ran"), errors.Join(errs...)
	}
	return nil, fmt.Errorf("no request %q", req)
}

// TestCgroupGuestRun runs in the kernel matrix's cgroup guest only
// (harness/kernels, TestCgroupBoundsInAGuest), in a delegated subtree: a
// contained run is created in a cgroup of its own, bounded as a whole by
// its memory bound (two processes, each under the per-process bound,
// together past it: one is killed, and the run's error names the cgroup's
// bound), and no cgroup is left afterwards.
func TestCgroupGuestRun(t *testing.T) {
	if os.Getenv("DSHSIM_CGROUP_GUEST") != "delegated" {
		t.Skip("runs in the kernel matrix's cgroup guest only (harness/kernels: TestCgroupBoundsInAGuest)")
	}
	d, err := cgroup.Delegated()
	if err != nil {
		t.Fatalf("no delegation: %v", err)
	}
	isolate.Require(t)
	ctx, opt := context.Background(), isolate.Options{Stderr: io.Discard, Bounds: isolate.Bounds{Memory: isolate.MinMemory}}
	out, err := isolate.Run(ctx, "test-cgroup", []byte("where"), opt)
	if err != nil || !strings.Contains(string(out), "/"+cgroup.Prefix) {
		t.Errorf("the run's cgroup: %q, %v; want one of its own (%s*)", out, err, cgroup.Prefix)
	}
	_, err = isolate.Run(ctx, "test-cgroup", []byte("memory"), opt)
	if want := "the run's cgroup stopped a process of it at its memory bound 256 MiB of the whole run (cgroup memory.max)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("past the run's memory: %v; want an error saying %q", err, want)
	}
	if left, _ := filepath.Glob(filepath.Join(d.Dir, cgroup.Prefix+"*")); len(left) > 0 {
		t.Errorf("the runs left their cgroups behind: %q", left)
	}
}
