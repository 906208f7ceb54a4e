package cgroup_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox/cgroup"
)

const cg2Mount = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"

// delegated is a host that delegates /user.slice/svc to the caller, whose
// processes live in its leaf (the usual delegation).
func delegated() map[string]string {
	svc, leaf := "sys/fs/cgroup/user.slice/svc/", "sys/fs/cgroup/user.slice/svc/leaf/"
	return map[string]string{
		"proc/self/cgroup":         "0::/user.slice/svc/leaf\n",
		"proc/self/mountinfo":      "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n" + cg2Mount,
		svc + "cgroup.controllers": "cpuset cpu io memory pids\n", svc + "cgroup.subtree_control": "memory pids\n", svc + "cgroup.procs": "",
		leaf + "cgroup.controllers": "memory pids\n", leaf + "cgroup.subtree_control": "\n", leaf + "cgroup.procs": "123\n456\n",
	}
}

// with is files with changes (an empty value removes a file; "\x00" is an
// empty file).
func with(files map[string]string, changes map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		out[k] = v
	}
	for k, v := range changes {
		switch v {
		case "":
			delete(out, k)
		case "\x00":
			out[k] = ""
		default:
			out[k] = v
		}
	}
	return out
}

const svc, leaf, root = "sys/fs/cgroup/user.slice/svc", "sys/fs/cgroup/user.slice/svc/leaf", "sys/fs/cgroup"

// TestDetect: Detect over fixture trees: the delegation it finds (the
// directory, the controllers still to enable) or why there is none.
func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		denied   []string // paths (relative) not writable
		dir      string   // the delegation's directory (relative), "" for none
		enable   []string
		whyParts []string // the reason names each
	}{
		{name: "the parent of the own cgroup is delegated", files: delegated(), dir: svc},
		{name: "its controllers enableable: it holds no process", files: with(delegated(), map[string]string{svc + "/cgroup.subtree_control": "\x00"}), dir: svc, enable: []string{"memory", "pids"}},
		{name: "one controller to enable", files: with(delegated(), map[string]string{svc + "/cgroup.subtree_control": "pids cpu\n"}), dir: svc, enable: []string{"memory"}},
		{name: "not enabled and it holds processes", files: with(delegated(), map[string]string{svc + "/cgroup.subtree_control": "\x00", svc + "/cgroup.procs": "77\n"}),
			whyParts: []string{svc + ": memory and pids not enabled for its children, and it holds processes", leaf + ": memory and pids not enabled for its children"}},
		{name: "not enabled and its subtree_control not writable", files: with(delegated(), map[string]string{svc + "/cgroup.subtree_control": "\x00"}), denied: []string{svc + "/cgroup.subtree_control"},
			whyParts: []string{svc + "/cgroup.subtree_control: memory and pids not enabled, and not writable by this process"}},
		{name: "memory not available", files: with(delegated(), map[string]string{svc + "/cgroup.controllers": "cpu pids\n", svc + "/cgroup.subtree_control": "pids\n"}),
			whyParts: []string{svc + ": the memory controller is not available (cgroup.controllers)"}},
		{name: "the directory not writable", files: delegated(), denied: []string{svc}, whyParts: []string{svc + ": not writable by this process"}},
		{name: "cgroup.procs not writable", files: delegated(), denied: []string{svc + "/cgroup.procs"}, whyParts: []string{svc + "/cgroup.procs: not writable by this process"}},
		{name: "the root cgroup, with processes: exempt", files: map[string]string{
			"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": cg2Mount,
			root + "/cgroup.controllers": "cpu memory pids\n", root + "/cgroup.subtree_control": "\x00", root + "/cgroup.procs": "1\n",
		}, dir: root, enable: []string{"memory", "pids"}},
		{name: "a v1 hybrid host: memory bound to v1", files: map[string]string{
			"proc/self/cgroup":                   "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/c4e7\n1:cpu:/\n0::/\n",
			"proc/self/mountinfo":                "40 30 0:35 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n41 30 0:36 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			root + "/unified/cgroup.controllers": "hugetlb\n", root + "/unified/cgroup.subtree_control": "\x00",
		}, whyParts: []string{"proc/self/cgroup:2: the pids controller is bound to a cgroup v1 hierarchy"}},
		{name: "v2 holds none of the controllers", files: map[string]string{
			"proc/self/cgroup": "1:name=systemd:/\n0::/\n", "proc/self/mountinfo": "40 30 0:35 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
			root + "/unified/cgroup.controllers": "hugetlb\n", root + "/unified/cgroup.subtree_control": "\x00",
		}, whyParts: []string{root + "/unified: the memory controller is not available"}},
		{name: "no cgroup2 mount", files: map[string]string{"proc/self/cgroup": "0::/a\n", "proc/self/mountinfo": "41 30 0:36 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"},
			whyParts: []string{"proc/self/mountinfo: no cgroup2 mount holds this process's cgroup /a"}},
		{name: "a mount root that is a prefix without its separator", files: with(delegated(), map[string]string{"proc/self/mountinfo": "30 23 0:26 /user /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"}),
			whyParts: []string{"no cgroup2 mount holds this process's cgroup /user.slice/svc/leaf"}},
		{name: "a mount of a subtree (a cgroup namespace's view)", files: map[string]string{
			"proc/self/cgroup": "0::/user.slice/svc/leaf\n", "proc/self/mountinfo": "30 23 0:26 /user.slice /mnt/cg\\040v2 rw - cgroup2 cgroup2 rw\n",
			"mnt/cg v2/svc/cgroup.controllers": "memory pids\n", "mnt/cg v2/svc/cgroup.subtree_control": "memory pids\n", "mnt/cg v2/svc/cgroup.procs": "\x00",
			"mnt/cg v2/svc/leaf/cgroup.controllers": "memory pids\n", "mnt/cg v2/svc/leaf/cgroup.subtree_control": "\x00", "mnt/cg v2/svc/leaf/cgroup.procs": "1\n",
		}, dir: "mnt/cg v2/svc"},
		{name: "the own cgroup is the mount's root: no parent looked at", files: with(delegated(), map[string]string{"proc/self/mountinfo": "30 23 0:26 /user.slice/svc/leaf /sys/fs/cgroup/user.slice/svc/leaf rw - cgroup2 cgroup2 rw\n"}),
			whyParts: []string{leaf + ": memory and pids not enabled for its children, and it holds processes"}},
		{name: "no v2 line", files: with(delegated(), map[string]string{"proc/self/cgroup": "1:name=systemd:/\n"}), whyParts: []string{"proc/self/cgroup: no cgroup v2 line (0::/path)"}},
		{name: "an empty file: cgroup v2 never mounted", files: with(delegated(), map[string]string{"proc/self/cgroup": "\x00"}), whyParts: []string{"proc/self/cgroup: no cgroup v2 line (0::/path)"}},
		{name: "an empty line", files: with(delegated(), map[string]string{"proc/self/cgroup": "0::/a\n\n1:cpu:/\n"}), whyParts: []string{`proc/self/cgroup:2: "" is not hierarchy-ID:controllers:path`}},
		{name: "a malformed line", files: with(delegated(), map[string]string{"proc/self/cgroup": "0::/a\nnonsense\n"}), whyParts: []string{`proc/self/cgroup:2: "nonsense" is not hierarchy-ID:controllers:path`}},
		{name: "no /proc/self/cgroup", files: with(delegated(), map[string]string{"proc/self/cgroup": ""}), whyParts: []string{"proc/self/cgroup: no such file"}},
		{name: "a cgroup file missing", files: with(delegated(), map[string]string{svc + "/cgroup.subtree_control": ""}), whyParts: []string{svc + "/cgroup.subtree_control: does not exist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			writable := func(p string) bool {
				rel, _ := filepath.Rel(dir, p)
				return !slices.Contains(tc.denied, rel)
			}
			d, err := cgroup.Detect(cgroup.Host{Root: dir, Writable: writable})
			if tc.dir == "" {
				var none *cgroup.NoDelegation
				if !errors.As(err, &none) {
					t.Fatalf("Detect = %+v, %v; want a *NoDelegation", d, err)
				}
				why := strings.ReplaceAll(err.Error(), dir+"/", "")
				for _, part := range tc.whyParts {
					if !strings.Contains(why, part) {
						t.Errorf("the reason %q does not say %q", why, part)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			if d.Dir != filepath.Join(dir, tc.dir) || !slices.Equal(d.Enable, tc.enable) {
				t.Errorf("Detect = %+v; want the directory %s, enabling %q", d, tc.dir, tc.enable)
			}
		})
	}
}

// TestThisHostIsDetected: Detect over this host's own files. A host whose
// memory or pids controller is bound to a cgroup v1 hierarchy (a hybrid
// host) delegates nothing: its calls take resource limits.
func TestThisHostIsDetected(t *testing.T) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	v1 := false
	for line := range strings.Lines(string(b)) {
		if f := strings.SplitN(strings.TrimSpace(line), ":", 3); len(f) == 3 && f[0] != "0" && slices.ContainsFunc(strings.Split(f[1], ","), func(c string) bool { return c == "memory" || c == "pids" }) {
			v1 = true
		}
	}
	d, err := cgroup.Detect(cgroup.Host{Root: "/"})
	t.Logf("this host: %+v, %v", d, err)
	var none *cgroup.NoDelegation
	if v1 && (!errors.As(err, &none) || !strings.Contains(err.Error(), "bound to a cgroup v1 hierarchy")) {
		t.Errorf("a v1 hybrid host (%q) detected as %+v, %v; want no delegation, for its v1 controllers", b, d, err)
	}
	if !v1 && err != nil && !errors.As(err, &none) {
		t.Errorf("Detect: %v, not a *NoDelegation", err)
	}
}
