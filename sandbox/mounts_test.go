package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// TestMountedRoot is the rule's table: a mount point beneath the root is
// refused, and so is a root that a bind mount makes a system tree; a root
// that is a whole other filesystem, one beneath a mount, and a bind whose
// source the table does not show are allowed. Each boundary has a case on
// both sides.
func TestMountedRoot(t *testing.T) {
	rootfs := procfs.Mount{Dev: "254:0", Root: "/", Point: "/", FSType: "ext4", Source: "/dev/vda"}
	tmp := procfs.Mount{Dev: "0:27", Root: "/", Point: "/tmp", FSType: "tmpfs", Source: "tmpfs"}
	bind := func(src, at string) procfs.Mount {
		return procfs.Mount{Dev: "254:0", Root: src, Point: at, FSType: "ext4", Source: "/dev/vda"}
	}
	tests := []struct {
		name   string
		root   string
		mounts []procfs.Mount
		want   string // "" = allowed
	}{
		{name: "no mount beneath", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, tmp}},
		{name: "a workspace under a tmpfs", root: "/tmp/ws", mounts: []procfs.Mount{rootfs, tmp}},
		{name: "a bind mount inside", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, bind("/etc", "/var/tmp/ws/etc")},
			want: "it contains the mount point /var/tmp/ws/etc (ext4 /dev/vda), and the grant would reach whatever that mount shows (a bind mount grants its source); unmount it or use a workspace without mounts beneath it"},
		{name: "another filesystem deep inside", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, {Dev: "0:40", Root: "/", Point: "/var/tmp/ws/a/b", FSType: "fuse.sshfs", Source: "host:"}},
			want: "it contains the mount point /var/tmp/ws/a/b (fuse.sshfs host:), and the grant would reach whatever that mount shows (a bind mount grants its source); unmount it or use a workspace without mounts beneath it"},
		{name: "a mount beside, sharing the name", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, bind("/etc", "/var/tmp/ws-etc")}},
		{name: "a mount above", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, bind("/var/data", "/var/tmp")}},
		{name: "the root is another filesystem", root: "/mnt/data", mounts: []procfs.Mount{rootfs, {Dev: "8:1", Root: "/", Point: "/mnt/data", FSType: "ext4", Source: "/dev/sdb1"}}},
		{name: "the root is a bind of a project", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, bind("/srv/project", "/var/tmp/ws")}},
		{name: "the root is a bind of /etc", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, bind("/etc", "/var/tmp/ws")},
			want: "it is, through a bind mount, /etc, and it is the system tree /etc, which the system or other users run or trust"},
		{name: "the root lies in a bind of /usr", root: "/var/tmp/ws/local", mounts: []procfs.Mount{rootfs, bind("/usr", "/var/tmp/ws")},
			want: "it is, through a bind mount, /usr/local, and it lies in the system tree /usr, which the system or other users run or trust"},
		{name: "the root is a bind of the home directory", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, bind("/home/u", "/var/tmp/ws")},
			want: "it is, through a bind mount, /home/u, and it is the home directory, whose start-up files and configuration the next login or tool run executes unconfined"},
		{name: "the later of stacked mounts covers", root: "/var/tmp/ws", mounts: []procfs.Mount{rootfs, bind("/etc", "/var/tmp/ws"), bind("/srv/p", "/var/tmp/ws")}},
		{name: "a bind whose source the table does not show", root: "/work", mounts: []procfs.Mount{{Dev: "0:50", Root: "/", Point: "/", FSType: "overlay", Source: "overlay"}, {Dev: "254:0", Root: "/etc", Point: "/work", FSType: "ext4", Source: "/dev/vda"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why, bad := MountedRoot(tc.root, tc.mounts, "/home/u")
			if bad != (tc.want != "") || why != tc.want {
				t.Errorf("MountedRoot(%q) = %q, %v; want %q", tc.root, why, bad, tc.want)
			}
		})
	}
}

// TestConfineRefusesAWorkspaceHoldingAMount: a real bind mount of an
// outside directory inside the workspace is refused by Validate, so by every
// confiner, naming the mount point; the workspace without it is granted.
func TestConfineRefusesAWorkspaceHoldingAMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs CAP_SYS_ADMIN (root) to bind-mount a directory into the workspace")
	}
	dir, err := os.MkdirTemp("/var/tmp", "dshsim-mount-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ws, out := filepath.Join(dir, "ws"), filepath.Join(dir, "out")
	inner := filepath.Join(ws, "inner")
	for _, d := range []string{ws, out, inner} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := exec.Command("mount", "--bind", out, inner).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here (%v: %s)", err, b)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", inner).Run() })
	_, err = Validate([]string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "it contains the mount point "+inner+" ") {
		t.Errorf("Validate = %v, want a refusal naming the mount point", err)
	}
	p := newProvider(t, Config{Platform: "linux", Chain: []string{BackendLandlock}, LauncherPath: "/l/landlock-run"})
	if _, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws}); !errors.Is(err, ErrBadInput) {
		t.Errorf("Confine = %v, want the refusal", err)
	}
	if _, err := Validate([]string{"true"}, Policy{Mode: ReadOnly, WorkspaceRoot: ws}); err != nil {
		t.Errorf("read-only grants no root, so a mount in it is no widening: %v", err)
	}
	if _, err := Validate([]string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: inner}); err != nil {
		t.Errorf("the mount itself, a bind of a plain directory, is a workspace like any: %v", err)
	}
}
