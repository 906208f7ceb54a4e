package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/sandbox"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestRunnerIsTheRealRunnerBuiltOnce(t *testing.T) {
	bin := Runner(t)
	if again := Runner(t); again != bin {
		t.Errorf("second call built again: %s, then %s", bin, again)
	}
	if !strings.HasPrefix(bin, os.TempDir()+"/dshsim-runner-") || !strings.HasSuffix(bin, "/landlock-run") {
		t.Errorf("runner at %s, want landlock-run in a temporary directory", bin)
	}
	// No arguments is a usage error the runner reports before it asks the kernel anything.
	out, err := exec.Command(bin).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 || string(out) != "landlock-run: usage error: missing `-- <argv>...` command\n" {
		t.Errorf("landlock-run without arguments: %v, %q", err, out)
	}
}

// fatalTB records Fatal instead of stopping the test.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Helper()               {}
func (f *fatalTB) Fatal(args ...any)     { f.fatal = fmt.Sprint(args...) }
func (f *fatalTB) Fatalf(string, ...any) { f.fatal = "fatalf" }

func TestRunnerWithoutMainFails(t *testing.T) {
	built.Lock()
	built.main = false
	built.Unlock()
	defer func() {
		built.Lock()
		built.main = true
		built.Unlock()
	}()
	f := &fatalTB{TB: t}
	Runner(f)
	if !strings.Contains(f.fatal, "sandboxtest.Main") {
		t.Errorf("Runner outside Main: fatal %q, want one naming sandboxtest.Main", f.fatal)
	}
}

func TestTempDirIsOutsideTmpAndRemoved(t *testing.T) {
	var dir string
	t.Run("make", func(t *testing.T) {
		dir = TempDir(t, "dshsim-sandboxtest-")
		root, err := ScratchRoot()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(dir, root+"/dshsim-sandboxtest-") {
			t.Errorf("TempDir = %s, want it under %s", dir, root)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Errorf("TempDir %s: %v", dir, err)
		}
	})
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there after its test: %v", dir, err)
	}
}

func TestLeftovers(t *testing.T) {
	empty, full := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(empty, "missing")
	got := Leftovers(empty, full, missing)
	if len(got) != 2 || got[0] != filepath.Join(full, "f") || !strings.Contains(got[1], missing) {
		t.Errorf("Leftovers = %q, want %s/f and the error reading %s", got, full, missing)
	}
	if got := Leftovers(empty); got != nil {
		t.Errorf("Leftovers of an empty directory = %q", got)
	}
}

// landlockEnabled reads the kernel's list of active LSMs, independently of
// the landlock syscall LandlockABI asks.
func landlockEnabled(t *testing.T) bool {
	b, err := os.ReadFile("/sys/kernel/security/lsm")
	if err != nil {
		t.Skipf("needs securityfs to cross-check Landlock: %v", err)
	}
	return strings.Contains(","+strings.TrimSpace(string(b))+",", ",landlock,")
}

func TestCondition(t *testing.T) {
	tests := []struct {
		cond          string
		want, wantErr bool
		why           string
	}{
		{"landlock:1", landlockEnabled(t), false, "holds when the kernel runs Landlock"},
		{"landlock:99", false, false, "an ABI beyond any kernel does not hold"},
		{"landlock:x", false, true, "landlock without a number is an error"},
		{"landlock:0", false, true, "N starts at 1"},
		{"bwrap", exec.Command("bwrap", sandbox.BwrapProbeArgs()...).Run() == nil, false, "follows bwrap's probe"},
		{"landlok:3", false, true, "an unknown condition is an error, never a silent skip"},
	}
	for _, tc := range tests {
		t.Run(tc.cond, func(t *testing.T) {
			got, err := Condition(tc.cond)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("Condition(%q) = %v, %v; want %v, error %v (%s)", tc.cond, got, err, tc.want, tc.wantErr, tc.why)
			}
		})
	}
}

func TestScratchRoot(t *testing.T) {
	// Under $TMPDIR (os.TempDir): refused below. Not t.TempDir, which
	// follows GOTMPDIR and may lie outside every temp area.
	fresh, err := os.MkdirTemp(os.TempDir(), "dshsim-scratchroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(fresh) })
	outside := TempDir(t, "dshsim-scratchroot-")
	cases := []struct {
		name, env, want, err string
	}{
		{name: "unset is /var/tmp", env: "", want: "/var/tmp"},
		{name: "a directory outside the temp areas", env: outside, want: outside},
		{name: "relative is refused", env: "scratch", err: "want an absolute path"},
		{name: "/tmp itself is refused", env: "/tmp", err: "inside the temp area /tmp"},
		{name: "under /tmp is refused", env: "/tmp/x", err: "inside the temp area /tmp"},
		{name: "under $TMPDIR is refused", env: fresh, err: "inside the temp area"},
		{name: "a sibling sharing the prefix of /tmp is not inside it", env: "/tmpfoo", want: "/tmpfoo"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(ScratchEnv, tc.env)
			got, err := ScratchRoot()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ScratchRoot() = %q, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ScratchRoot() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestUsableScratchRoot: a scratch root that does not exist, is a file or
// cannot be written is refused, the error naming the variable; unset names
// /var/tmp and says the variable is unset.
func TestUsableScratchRoot(t *testing.T) {
	dir := TempDir(t, "dshsim-usable-")
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, env, err string
		nonRoot        bool // root writes a mode-0555 directory (CAP_DAC_OVERRIDE)
	}{
		{name: "a directory", env: dir},
		{name: "missing", env: filepath.Join(dir, "none"), err: ScratchEnv + "=" + filepath.Join(dir, "none") + ": no such directory"},
		{name: "a file", env: file, err: ScratchEnv + "=" + file + ": not a directory"},
		{name: "not absolute", env: "rel", err: ScratchEnv + "=rel: want an absolute path"},
		{name: "not writable", env: readOnly, err: ScratchEnv + "=" + readOnly + ": not writable (permission denied)", nonRoot: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.nonRoot && os.Geteuid() == 0 {
				t.Skip("root writes a mode-0555 directory (CAP_DAC_OVERRIDE); the unprivileged pass runs this")
			}
			t.Setenv(ScratchEnv, tc.env)
			got, err := UsableScratchRoot()
			if tc.err == "" {
				if err != nil || got != tc.env {
					t.Fatalf("UsableScratchRoot() = %q, %v; want %q", got, err, tc.env)
				}
				return
			}
			if err == nil || err.Error() != tc.err {
				t.Fatalf("UsableScratchRoot() = %q, %v; want the error %q", got, err, tc.err)
			}
		})
	}
	t.Run("unset", func(t *testing.T) {
		t.Setenv(ScratchEnv, "")
		if got, err := UsableScratchRoot(); got != "/var/tmp" && (err == nil || !strings.HasPrefix(err.Error(), "the scratch root /var/tmp ("+ScratchEnv+" unset): ")) {
			t.Fatalf("UsableScratchRoot() = %q, %v; want /var/tmp or an error naming it and the variable", got, err)
		}
	})
}

// TestCancelledBuildLeavesNothing: a build cancelled while the go tool
// compiles (a cold build cache, so it is still at work) leaves nothing in
// the output directory but what was there, and nothing in TMPDIR: the go
// tool, killed, cannot remove its own work directory.
func TestCancelledBuildLeavesNothing(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := BuildContext(ctx, "", dir, "landlock-run", RunnerPackage, "GOCACHE="+t.TempDir(), "TMPDIR="+tmp); err == nil {
		t.Skip("the build finished within 500 ms: nothing was cancelled")
	}
	if left := Leftovers(dir, tmp); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
