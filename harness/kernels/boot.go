package kernels

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// InitScript is the initramfs /init: mount the pseudo filesystems, run the
// agent (runner, probes, the real provider), print its exit status, power off.
const InitScript = `#!/bin/busybox sh
export PATH=/bin
/bin/busybox mkdir -p /proc /sys /dev /tmp /var/tmp
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mount -t tmpfs tmpfs /tmp
/bin/matrix-agent -provider -runner /bin/landlock-run -probe /bin/escape-probe -base /var/tmp/matrix
/bin/busybox echo "@@DSHSIM-AGENT-EXIT $?"
/bin/busybox poweroff -f
`

// BaselineInit is the /init of the baseline boot: power off at once. The
// difference to a matrix boot is the cost of the probes themselves.
const BaselineInit = "#!/bin/busybox sh\n/bin/busybox poweroff -f\n"

// Initramfs builds a gzip'd newc cpio (cpio -o -H newc -R 0:0 | gzip)
// holding /init, /bin/busybox (and /bin/true, its applet) and the given static binaries (name -> host
// path) in /bin, every entry owned by root and / mode 0755, written to dst.
func Initramfs(ctx context.Context, dst, busybox, init string, bins map[string]string) error {
	stage, err := os.MkdirTemp(filepath.Dir(dst), "initramfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	// The stage becomes the guest's /: world-searchable, and (cpio -R 0:0)
	// root's, whoever builds it. The runner drops every capability, so the
	// guest's root can no longer traverse a / that only another uid may
	// (MkdirTemp makes it 0700, owned by the builder).
	if err := os.Chmod(stage, 0o755); err != nil {
		return err
	}
	for _, d := range []string{"bin", "proc", "sys", "dev", "tmp", "var/tmp"} {
		if err := os.MkdirAll(filepath.Join(stage, d), 0o755); err != nil {
			return err
		}
	}
	copyFile := func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o755)
	}
	if err := copyFile(busybox, filepath.Join(stage, "bin", "busybox")); err != nil {
		return err
	}
	// /bin/true, busybox's applet: the in-process path's probe starts it
	// (inproc.Launcher.Probe), as it would on any host.
	if err := os.Symlink("busybox", filepath.Join(stage, "bin", "true")); err != nil {
		return err
	}
	for name, src := range bins {
		if err := copyFile(src, filepath.Join(stage, "bin", name)); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(stage, "init"), []byte(init), 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", `find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -9 > "$1"`, "sh", dst)
	cmd.Dir = stage
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("cpio: %v\n%s", err, out)
	}
	return nil
}

// KernelCmdline is the guest kernel's command line. no_timer_check: under
// software emulation on a loaded host the vCPU thread can miss the timer
// interrupts the kernel's early IO-APIC timer check waits for, and the kernel
// then panics ("IO-APIC + timer doesn't work!") before /init runs: that was
// kernel-matrix's "no end record" under load. panic=-1 with qemu -no-reboot
// ends a panicking guest at once.
const KernelCmdline = "console=ttyS0 quiet panic=-1 no_timer_check"

// bootTimeout bounds one qemu boot; a boot takes seconds on an idle machine
// and several times that on a loaded one (software emulation).
const bootTimeout = 5 * time.Minute

// Boot runs qemu-system-x86_64 (software emulation, no KVM, cpus virtual CPUs) with the serial
// console on stdout and returns the console capture and the wall time from
// start to power-off.
func Boot(ctx context.Context, vmlinuz, initrd string, cpus int) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, bootTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-m", "512", "-smp", strconv.Itoa(max(cpus, 1)), "-nographic", "-no-reboot",
		"-kernel", vmlinuz, "-initrd", initrd, "-append", KernelCmdline)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return out.Bytes(), d, fmt.Errorf("qemu: %v (console tail: %q)", err, tail(out.Bytes(), 400))
	}
	return out.Bytes(), d, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
