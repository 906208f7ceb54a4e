package kernels_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/kernels"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestCgroupBoundsInAGuest boots a real cgroup v2 kernel under qemu and
// runs the spawn package's TestCgroupGuest and the isolate package's
// TestCgroupGuestRun there (kernels.CgroupInit): without a cgroup2 mount a
// bounded call takes resource limits; in a delegated subtree, as root and
// as nobody, each call runs in a cgroup of its own, and a call past its
// memory, process or CPU time bound is stopped and its result names the
// cgroup's bound; a contained recording's run is bounded as a whole in a
// cgroup of its own, and its error names the cgroup's bound. This host (a cgroup v1
// hybrid) cannot run that path itself.
func TestCgroupBoundsInAGuest(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a kernel under qemu; not in -short")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86): the cgroup guest cannot boot here")
	}
	ctx := context.Background()
	dir := kernels.DefaultCache()
	cache := kernels.Cache{Dir: dir, ReadOnly: kernels.SharedCaches(dir), Logf: t.Logf}
	vmlinuz, err := cache.Vmlinuz(ctx, kernels.CgroupKernel)
	if err != nil {
		t.Skipf("no kernel image of %s (%s) could be had: %v", kernels.CgroupKernel.Name, kernels.CgroupKernel.Package, err)
	}
	busybox, err := cache.BusyboxPath(ctx)
	if err != nil {
		t.Skipf("no static busybox (%s) could be had: %v", kernels.Busybox, err)
	}
	root, err := kernels.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	work := sandboxtest.TempDir(t, "dshsim-cgroup-guest-")
	bins, err := kernels.BuildCgroupTests(ctx, root, work)
	if err != nil {
		t.Fatal(err)
	}
	console, err := kernels.CgroupGuest(ctx, vmlinuz, busybox, bins, work)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("console:\n%s", console)
	for _, p := range kernels.CheckCgroupConsole(console) {
		t.Error(p)
	}
}

// TestCheckCgroupConsole: the console check fails a pass that ended
// badly, a test that did not run in every pass, and a skip or a failure.
func TestCheckCgroupConsole(t *testing.T) {
	good := ""
	for _, p := range kernels.CgroupPasses {
		good += "=== RUN   " + p.Test + "\n--- PASS: " + p.Test + " (1.00s)\nPASS\n@@DSHSIM-CGROUP " + p.Name + " 0\n"
	}
	for _, tc := range []struct {
		name, console, want string
	}{
		{"every pass passed", good, ""},
		{"carriage returns", strings.ReplaceAll(good, "\n", "\r\n"), ""},
		{"a pass failed", strings.Replace(good, "@@DSHSIM-CGROUP none 0", "@@DSHSIM-CGROUP none 1", 1), "the pass none did not end with status 0"},
		{"a pass never ended", strings.Replace(good, "@@DSHSIM-CGROUP delegated-65534 0\n", "", 1), "the pass delegated-65534 did not end with status 0"},
		{"a pass skipped", strings.Replace(good, "--- PASS: TestCgroupGuest (1.00s)", "--- SKIP: TestCgroupGuest (0.00s)", 1), "TestCgroupGuest passed 2 times, want 3"},
		{"the recording's pass skipped", strings.Replace(good, "--- PASS: TestCgroupGuestRun (1.00s)", "--- SKIP: TestCgroupGuestRun (0.00s)", 1), "TestCgroupGuestRun passed 0 times, want 1"},
		{"a subtest failed", strings.Replace(good, "PASS\n", "--- FAIL: TestCgroupGuest/memory (1.00s)\nPASS\n", 1), "skipped or failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(kernels.CheckCgroupConsole([]byte(tc.console)), "; ")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
		})
	}
}
