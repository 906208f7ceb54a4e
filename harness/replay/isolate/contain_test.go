package isolate_test

import (
	"context"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/replay/asuser"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestChildSeesTheLeastHost: the child's root holds the system
// directories, an /etc of a few entries, its own /tmp, /dev and /proc, an
// empty /opt, and what was shared; nothing of /home, /root, /run, /var,
// the host's /tmp or /etc's secrets. What the run reports it could see
// says the same.
func TestChildSeesTheLeastHost(t *testing.T) {
	isolate.Require(t)
	shared := sharedDir(t)
	secrets := []string{"/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/ssl/private", "/etc/sudoers", "/etc/gitconfig", "/root", "/home", "/run", "/var", "/srv", "/sys", "/etc/resolv.conf"}
	// The shared directory's parents are made for it (as uid 65534 the
	// scratch root may lie in /var/tmp).
	secrets = slices.DeleteFunc(secrets, func(p string) bool { return strings.HasPrefix(shared, p+"/") })
	f, err := isolate.Probe(context.Background(), isolate.ProbeRequest{Share: []string{shared}, Reach: secrets})
	if err != nil {
		t.Fatal(err)
	}
	top, _, _ := strings.Cut(strings.TrimPrefix(shared, "/"), "/")
	allowed := []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "tmp", "dev", "proc", "opt", top}
	for _, e := range f.Root {
		if !slices.Contains(allowed, e) {
			t.Errorf("the child's root holds /%s", e)
		}
	}
	for _, want := range []string{"usr", "etc", "tmp", "dev", "proc"} {
		if !slices.Contains(f.Root, want) {
			t.Errorf("the child's root lacks /%s: %q", want, f.Root)
		}
	}
	for _, e := range f.Etc {
		if !isolate.EtcAllowed(e) && e != "passwd" && e != "group" {
			t.Errorf("the child's /etc holds %s", e)
		}
	}
	for _, p := range secrets {
		if got := f.Reached[p]; !strings.Contains(got, "no such file or directory") {
			t.Errorf("%s in the child: %q, want no such file or directory", p, got)
		}
	}
	seen := f.Seen.String()
	for _, want := range []string{"/usr (read-only)", "/etc (read-only: ", "passwd and group made", "/tmp (a tmpfs of its own, 512 MiB)",
		"/proc (its PID namespace's own)", shared + " (shared, read-only)", "no capabilities", "network: none", isolate.DefaultBounds.String()} {
		if !strings.Contains(seen, want) {
			t.Errorf("what the run reports lacks %q: %s", want, seen)
		}
	}
	if os.Getuid() == 0 && !strings.Contains(seen, "uid 65534 and gid 65534, the same on the host, no other host id mapped, no supplementary groups") {
		t.Errorf("root's run reports its ids as %q", f.Seen.IDs)
	}
}

// TestEnvIsAnAllowlist: the child inherits the locale, PATH, HOME and the
// like, and what its caller names, but never a variable named like a key,
// token, secret or password, even one its caller names.
func TestEnvIsAnAllowlist(t *testing.T) {
	isolate.Require(t)
	t.Setenv("DEEPSEEK_API_KEY", "sk-dshsim-isolate-test")
	t.Setenv("DSHSIM_TEST_TOKEN", "t")
	t.Setenv("DSHSIM_TEST_NAMED", "n")
	t.Setenv("SOME_OTHER_VARIABLE", "v")
	f, err := isolate.Probe(context.Background(), isolate.ProbeRequest{Env: []string{"DSHSIM_TEST_NAMED", "DEEPSEEK_API_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PATH", "HOME", "TMPDIR", "DSHSIM_TEST_NAMED"} {
		if !slices.Contains(f.Env, want) {
			t.Errorf("the child's environment lacks %s: %q", want, f.Env)
		}
	}
	for _, name := range f.Env {
		if name == "DEEPSEEK_API_KEY" || name == "DSHSIM_TEST_TOKEN" || name == "SOME_OTHER_VARIABLE" || strings.HasPrefix(name, "DSHSIM_ISOLATE") {
			t.Errorf("the child's environment holds %s", name)
		}
	}
}

// plantedEnv passes the sockets and FIFOs an outer run planted to an inner
// run as another user.
const plantedEnv = "DSHSIM_TEST_PLANTED"

// plantGroup is the group the planted sockets belong to (the inner run as
// uid 65534 holds it as a supplementary group).
const plantGroup = 4242

// TestNoHostSocketOrFIFOIsReachable: a socket (mode 0660, group 4242) and
// a FIFO (mode 0600) planted where an attacker would look (the host's
// /tmp, /var/tmp, /dev/shm, the scratch root, the home directory, and, as
// root, /run) are not in the child's root, and no socket or FIFO at all is
// anywhere in it (/proc, /dev and its own /tmp aside). Run as uid 65534
// holding group 4242 (TestAsAnotherUser), the sockets root planted are
// reachable on the host, so the group matters, and not in the child.
func TestNoHostSocketOrFIFOIsReachable(t *testing.T) {
	isolate.Require(t)
	var planted []string
	if v := os.Getenv(plantedEnv); v != "" {
		planted = strings.Split(v, ":")
		reachable := 0
		for _, p := range planted {
			if c, err := net.Dial("unix", p); err == nil && strings.HasSuffix(p, ".sock") {
				c.Close()
				reachable++
			}
		}
		if reachable == 0 {
			t.Fatalf("none of the sockets root planted is reachable on the host by this user: %q", planted)
		}
	} else {
		planted = plant(t)
	}
	f, err := isolate.Probe(context.Background(), isolate.ProbeRequest{Reach: planted, Walk: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range planted {
		if got := f.Reached[p]; !strings.Contains(got, "no such file or directory") {
			t.Errorf("%s in the child: %q, want no such file or directory", p, got)
		}
	}
	for _, p := range f.Specials {
		t.Errorf("the child's root holds the socket or FIFO %s", p)
	}
}

// plant makes a socket and a FIFO in each place an attacker would look
// that this user may write, and returns their paths.
func plant(t *testing.T) []string {
	t.Helper()
	dirs := []string{sandboxtest.TempDir(t, "dshsim-planted-")}
	for _, parent := range []string{"/tmp", "/var/tmp", "/dev/shm", os.Getenv("HOME"), "/run"} {
		if parent == "" || parent == "/" {
			continue
		}
		d, err := os.MkdirTemp(parent, "dshsim-planted-")
		if err != nil {
			continue // not a place this user may write
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dirs = append(dirs, d)
	}
	var out []string
	for _, d := range dirs {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		sock, fifo := filepath.Join(d, "planted.sock"), filepath.Join(d, "planted.fifo")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		if err := os.Chmod(sock, 0o660); err != nil {
			t.Fatal(err)
		}
		if os.Getuid() == 0 {
			if err := os.Chown(sock, 0, plantGroup); err != nil {
				t.Fatal(err)
			}
		}
		if err := unix.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, sock, fifo)
	}
	return out
}

// TestSupplementaryGroupsOpenNothing: an unprivileged caller's
// supplementary groups stay with its child (an unprivileged user namespace
// cannot drop them), so the host files the child's root binds must grant
// those groups nothing that others are not granted: the system directories
// and kept /etc entries hold no such entry.
func TestSupplementaryGroupsOpenNothing(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root's child holds no supplementary group (TestChildHasAPrivateTmp)")
	}
	groups, err := os.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	groups = slices.DeleteFunc(groups, func(g int) bool { return g == os.Getgid() })
	if len(groups) == 0 {
		t.Skip("this user holds no supplementary group (TestAsAnotherUser runs this with one)")
	}
	for _, root := range isolate.HostPaths() {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if ok && slices.Contains(groups, int(st.Gid)) && (st.Mode>>3)&^st.Mode&0o7 != 0 {
				t.Errorf("%s (group %d, mode %04o) grants this user's group what others are not granted", p, st.Gid, st.Mode&0o7777)
			}
			return nil
		})
	}
}

// TestAsAnotherUserWithAGroup runs the socket and FIFO test and the groups
// test as uid 65534 holding group 4242, reaching for what root planted.
func TestAsAnotherUserWithAGroup(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root (CAP_SETUID) to run the tests as uid 65534 with a group")
	}
	isolate.Require(t)
	planted := plant(t)
	asuser.RunTests(t, asuser.Run{
		Tests:  []string{"TestNoHostSocketOrFIFOIsReachable", "TestSupplementaryGroupsOpenNothing"},
		Groups: []uint32{plantGroup},
		Env:    []string{plantedEnv + "=" + strings.Join(planted, ":")},
	})
}

// TestRootWithAGroupDropsIt: root holding a supplementary group (4242) runs
// TestChildHasAPrivateTmp again: its child holds no supplementary group.
func TestRootWithAGroupDropsIt(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root (CAP_SETGID) to hold a supplementary group")
	}
	isolate.Require(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run", "^TestChildHasAPrivateTmp$", "-test.v", "-test.count=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{plantGroup}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestChildHasAPrivateTmp") {
		t.Fatalf("as root holding group %d: %v\n%s", plantGroup, err, out)
	}
}

// TestChildHasPseudoTerminalsOfItsOwn: the child's /dev has a devpts
// instance of its own (the persistent shell runs on a pseudo-terminal):
// its multiplexer opens, and none of the host's terminals is in it.
func TestChildHasPseudoTerminalsOfItsOwn(t *testing.T) {
	isolate.Require(t)
	host, _ := filepath.Glob("/dev/pts/[0-9]*")
	reach := append(slices.Clone(host), "/dev/pts/0", "/dev/ptmx")
	f, err := isolate.Probe(context.Background(), isolate.ProbeRequest{Reach: reach})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Reached["/dev/ptmx"]; got != "" {
		t.Errorf("/dev/ptmx in the child: %q, want it opened", got)
	}
	for _, p := range append(host, "/dev/pts/0") {
		if got := f.Reached[p]; !strings.Contains(got, "no such file or directory") {
			t.Errorf("%s in the child: %q, want no such file or directory", p, got)
		}
	}
	if seen := f.Seen.String(); !strings.Contains(seen, "pts: pseudo-terminals of its own") {
		t.Errorf("what the run reports lacks its terminals: %s", seen)
	}
}
