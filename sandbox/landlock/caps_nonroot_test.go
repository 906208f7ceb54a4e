package landlock

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestRunnerClearsTheCapabilitiesOfANonRootCaller: a caller that is not
// root but holds a capability (uid 65534 with CAP_CHOWN ambient, so
// permitted and effective in the runner) has nothing left in the command it
// confines, even when the command's file carries that capability (cap_chown+ep):
// under no_new_privs execve grants a file capability only within the
// runner's permitted set, which the runner cleared. Without the clear the
// command ran with CapEff 0000000000000001.
func TestRunnerClearsTheCapabilitiesOfANonRootCaller(t *testing.T) {
	requireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_SETUID to start the runner as uid 65534 holding CAP_CHOWN, CAP_SETFCAP to give a file a capability)")
	}
	dir := sandboxtest.TempDir(t, "dshsim-caps-")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runner := filepath.Join(dir, "landlock-run")
	capcat := filepath.Join(dir, "capcat")
	copyExecutable(t, sandboxtest.Runner(t), runner)
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skipf("cat: %v", err)
	}
	copyExecutable(t, cat, capcat)
	// security.capability, revision 2: CAP_CHOWN permitted, effective bit set.
	var vfsCap [20]byte
	binary.LittleEndian.PutUint32(vfsCap[0:], 0x02000000|0x000001)
	binary.LittleEndian.PutUint32(vfsCap[4:], 1<<unix.CAP_CHOWN)
	if err := unix.Setxattr(capcat, "security.capability", vfsCap[:], 0); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			t.Skipf("the file system of %s keeps no file capabilities: %v", dir, err)
		}
		t.Fatalf("set the file capability of %s: %v", capcat, err)
	}
	nonRoot := func(argv ...string) string {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, AmbientCaps: []uintptr{unix.CAP_CHOWN}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v as uid 65534: %v", argv, err)
		}
		return string(out)
	}
	// The caller holds the capability: unconfined, the command has it.
	if got := statusFields(nonRoot(capcat, "/proc/self/status"))["CapEff"]; got != "0000000000000001" {
		t.Fatalf("unconfined CapEff %s: the caller does not hold CAP_CHOWN as set up", got)
	}
	status := statusFields(nonRoot(runner, "--ro", "/", "--", capcat, "/proc/self/status"))
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		if status[k] != "0000000000000000" {
			t.Errorf("%s %s inside the sandbox, want none", k, status[k])
		}
	}
	if status["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs %q inside the sandbox, want 1", status["NoNewPrivs"])
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// statusFields maps the "Key:\tvalue" lines of a /proc/<pid>/status.
func statusFields(status string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}
