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

// CgroupPasses are the runs of the spawn tests' TestCgroupGuest in the
// cgroup guest, in order: without any cgroup2 mount (resource limits), as
// root in a delegated subtree, and as nobody (65534) in the same subtree
// handed to it.
var CgroupPasses = []string{"none", "delegated-root", "delegated-65534"}

// CgroupInit is the cgroup guest's /init: it runs the spawn package's test
// binary (/bin/spawn.test) once before cgroup2 is mounted, then mounts it,
// enables +memory +pids +cpu in the root's subtree_control, delegates
// /deleg (the controllers enabled for its children) and runs the binary in
// its leaf /deleg/leaf, as root and then as nobody with /deleg chowned to
// it. Each run ends with "@@DSHSIM-CGROUP <pass> <exit status>".
const CgroupInit = `#!/bin/busybox sh
export PATH=/bin
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
/bin/busybox chown -R 65534:65534 $C/deleg
/bin/sh -c "echo \$\$ > $C/deleg/leaf/cgroup.procs && exec /bin/busybox su -s /bin/sh nobody -c 'cd /tmp && DSHSIM_CGROUP_GUEST=delegated TMPDIR=/tmp exec $T'"
echo "@@DSHSIM-CGROUP delegated-65534 $?"
/bin/busybox poweroff -f
`

// BuildSpawnTest builds the spawn package's test binary (static,
// CGO_ENABLED=0) into dir and returns its path.
func BuildSpawnTest(ctx context.Context, root, dir string) (string, error) {
	out := filepath.Join(dir, "spawn.test")
	work, err := os.MkdirTemp(dir, "gotmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-trimpath", "-buildvcs=false", "-o", out, "./sandbox/spawn")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOTMPDIR="+work)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go test -c ./sandbox/spawn: %v\n%s", err, b)
	}
	return out, nil
}

// CgroupGuest boots [CgroupKernel] with [CgroupInit] and the spawn test
// binary at spawnTest, in work, and returns the console.
func CgroupGuest(ctx context.Context, vmlinuz, busybox, spawnTest, work string) ([]byte, error) {
	initrd := filepath.Join(work, "cgroup-initrd.gz")
	if err := Initramfs(ctx, initrd, busybox, CgroupInit, map[string]string{"spawn.test": spawnTest}); err != nil {
		return nil, err
	}
	defer os.Remove(initrd)
	console, _, err := Boot(ctx, vmlinuz, initrd, CgroupKernel.CPUs)
	return console, err
}

// CheckCgroupConsole says what the cgroup guest's console lacks: each
// pass of [CgroupPasses] ended with status 0, and the test ran (passed,
// not skipped) in each. Pure.
func CheckCgroupConsole(console []byte) []string {
	text := strings.ReplaceAll(string(console), "\r", "")
	var problems []string
	for _, pass := range CgroupPasses {
		if !strings.Contains(text, "\n@@DSHSIM-CGROUP "+pass+" 0\n") {
			problems = append(problems, fmt.Sprintf("the pass %s did not end with status 0", pass))
		}
	}
	if n := strings.Count(text, "--- PASS: TestCgroupGuest "); n != len(CgroupPasses) {
		problems = append(problems, fmt.Sprintf("TestCgroupGuest passed %d times, want %d (once per pass)", n, len(CgroupPasses)))
	}
	if strings.Contains(text, "--- SKIP: TestCgroupGuest") || strings.Contains(text, "--- FAIL") {
		problems = append(problems, "TestCgroupGuest was skipped or failed in a pass")
	}
	return problems
}
