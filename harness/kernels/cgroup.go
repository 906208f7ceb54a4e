package kernels

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CgroupKernel is the kernel the cgroup guest boots: a pure cgroup v2
// kernel with the memory and pids controllers and cgroup.kill.
var CgroupKernel = Kernels[2]

// CgroupPasses are the test runs in the cgroup guest, in order, each
// named for what it runs: the spawn tests' TestCgroupGuest without any
// cgroup2 mount (resource limits), as root in a delegated subtree, the
// isolate tests' TestCgroupGuestRun there (a contained recording's run),
// and TestCgroupGuest as nobody (65534) in the same subtree handed to it.
var CgroupPasses = []struct{ Name, Test string }{
	{"none", "TestCgroupGuest"}, {"delegated-root", "TestCgroupGuest"},
	{"recording", "TestCgroupGuestRun"}, {"delegated-65534", "TestCgroupGuest"},
}

// CgroupInit is the cgroup guest's /init. It first moves the guest's root
// onto a tmpfs (switch_root: a contained run pivots its root, which the
// initramfs itself cannot be), then runs the spawn package's test binary
// (/bin/spawn.test) once before cgroup2 is mounted, mounts it, enables
// +memory +pids +cpu in the root's subtree_control, delegates /deleg (the
// controllers enabled for its children) and runs, in its leaf /deleg/leaf,
// the spawn test binary as root, the isolate package's (/bin/isolate.test)
// as root, and the spawn test binary as nobody with /deleg chowned to it.
// Each run ends with "@@DSHSIM-CGROUP <pass> <exit status>".
const CgroupInit = `#!/bin/busybox sh
export PATH=/bin
if [ ! -e /.switched ]; then
	/bin/busybox mkdir -p /newroot
	/bin/busybox mount -t tmpfs tmpfs /newroot
	/bin/busybox cp -a /bin /init /newroot/
	/bin/busybox touch /newroot/.switched
	exec /bin/busybox switch_root /newroot /init
fi
/bin/busybox mkdir -p /proc /sys /dev /tmp /var/tmp /etc
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mount -t tmpfs tmpfs /tmp
/bin/busybox chmod 1777 /tmp
/bin/busybox ln -s busybox /bin/sh
echo 'root:x:0:0::/tmp:/bin/sh' > /etc/passwd
echo 'nobody:x:65534:65534::/tmp:/bin/sh' >> /etc/passwd
echo 'root:x:0:' > /etc/group
echo 'nogroup:x:65534:' >> /etc/group
T='/bin/spawn.test -test.run ^TestCgroupGuest$ -test.v -test.count=1 -test.timeout 5m'
DSHSIM_CGROUP_GUEST=none $T
echo "@@DSHSIM-CGROUP none $?"
C=/sys/fs/cgroup
/bin/busybox mount -t cgroup2 cgroup2 $C
echo '+memory +pids +cpu' > $C/cgroup.subtree_control
/bin/busybox mkdir $C/deleg
echo '+memory +pids +cpu' > $C/deleg/cgroup.subtree_control
/bin/busybox mkdir $C/deleg/leaf
/bin/sh -c "echo \$\$ > $C/deleg/leaf/cgroup.procs && DSHSIM_CGROUP_GUEST=delegated exec $T"
echo "@@DSHSIM-CGROUP delegated-root $?"
/bin/sh -c "echo \$\$ > $C/deleg/leaf/cgroup.procs && DSHSIM_CGROUP_GUEST=delegated exec /bin/isolate.test -test.run ^TestCgroupGuestRun$ -test.v -test.count=1 -test.timeout 5m"
echo "@@DSHSIM-CGROUP recording $?"
/bin/busybox chown -R 65534:65534 $C/deleg
/bin/sh -c "echo \$\$ > $C/deleg/leaf/cgroup.procs && exec /bin/busybox su -s /bin/sh nobody -c 'cd /tmp && DSHSIM_CGROUP_GUEST=delegated TMPDIR=/tmp exec $T'"
echo "@@DSHSIM-CGROUP delegated-65534 $?"
/bin/busybox poweroff -f
`

// CgroupTests are the test binaries the cgroup guest runs: name in the
// guest's /bin -> package.
var CgroupTests = map[string]string{"spawn.test": "./sandbox/spawn", "isolate.test": "./harness/replay/isolate"}

// BuildCgroupTests builds [CgroupTests] (static, CGO_ENABLED=0) into dir and
// returns name -> path.
func BuildCgroupTests(ctx context.Context, root, dir string) (map[string]string, error) {
	work, err := os.MkdirTemp(dir, "gotmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	out := map[string]string{}
	for name, pkg := range CgroupTests {
		out[name] = filepath.Join(dir, name)
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-trimpath", "-buildvcs=false", "-o", out[name], pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOTMPDIR="+work)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go test -c %s: %v\n%s", pkg, err, b)
		}
	}
	return out, nil
}

// CgroupGuest boots [CgroupKernel] with [CgroupInit] and the test binaries
// bins ([BuildCgroupTests]), in work, and returns the console.
func CgroupGuest(ctx context.Context, vmlinuz, busybox string, bins map[string]string, work string) ([]byte, error) {
	initrd := filepath.Join(work, "cgroup-initrd.gz")
	if err := Initramfs(ctx, initrd, busybox, CgroupInit, bins); err != nil {
		return nil, err
	}
	defer os.Remove(initrd)
	console, _, err := Boot(ctx, vmlinuz, initrd, CgroupKernel.CPUs)
	return console, err
}

// CheckCgroupConsole says what the cgroup guest's console lacks: each
// pass of [CgroupPasses] ended with status 0 and its test passed in it
// (not skipped), and nothing failed. Pure.
func CheckCgroupConsole(console []byte) []string {
	text := strings.ReplaceAll(string(console), "\r", "")
	var problems []string
	want := map[string]int{}
	for _, pass := range CgroupPasses {
		want[pass.Test]++
		if !strings.Contains(text, "\n@@DSHSIM-CGROUP "+pass.Name+" 0\n") {
			problems = append(problems, fmt.Sprintf("the pass %s did not end with status 0", pass.Name))
		}
	}
	for _, test := range []string{"TestCgroupGuest", "TestCgroupGuestRun"} {
		if n := strings.Count(text, "--- PASS: "+test+" "); n != want[test] {
			problems = append(problems, fmt.Sprintf("%s passed %d times, want %d (once per pass that runs it)", test, n, want[test]))
		}
	}
	if strings.Contains(text, "--- SKIP: TestCgroupGuest") || strings.Contains(text, "--- FAIL") {
		problems = append(problems, "a test was skipped or failed in a pass")
	}
	return problems
}
