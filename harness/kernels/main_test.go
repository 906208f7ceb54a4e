package kernels_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/kernels"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// mainEnv makes this test binary run kernels.Main instead of the tests (the
// command under test, as a real process that can be signalled).
const mainEnv = "DSHSIM_KERNELS_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(kernels.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestInterruptedRunCleansUp: kernel-matrix interrupted by SIGTERM while it
// builds, or by SIGINT while layer 1 runs its probes, stops, exits 128+signal
// and leaves nothing in its scratch root or in $TMPDIR.
func TestInterruptedRunCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the guest binaries; not in -short")
	}
	sandboxtest.RequireLandlock(t, 1)
	cases := []struct {
		sig  syscall.Signal
		when string // the path under the work directory whose existence triggers the signal
	}{
		{syscall.SIGTERM, "."},      // the work directory exists: building
		{syscall.SIGINT, "scratch"}, // layer 1 has started its probes
	}
	for _, tc := range cases {
		t.Run(tc.sig.String(), func(t *testing.T) {
			scratch := sandboxtest.TempDir(t, "dshsim-kmatrix-signal-")
			tmp := t.TempDir()
			cmd := exec.Command(os.Args[0], "-layer1")
			cmd.Env = append(os.Environ(), mainEnv+"=1", sandboxtest.ScratchEnv+"="+scratch, "TMPDIR="+tmp)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var err error
			for deadline := time.Now().Add(3 * time.Minute); ; {
				m, _ := filepath.Glob(filepath.Join(scratch, "dshsim-kmatrix-*", tc.when))
				if len(m) > 0 {
					break
				}
				select {
				case err = <-exited:
					t.Fatalf("kernel-matrix ended before %s appeared: %v\n%s", tc.when, err, stderr.String())
				case <-time.After(20 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("%s never appeared under %s\n%s", tc.when, scratch, stderr.String())
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = waittest.Recv(t, exited, "kernel-matrix to exit after "+tc.sig.String())
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(tc.sig) {
				t.Errorf("exit %v, want status %d\n%s", err, 128+int(tc.sig), stderr.String())
			}
			if !strings.Contains(stderr.String(), "kernel-matrix: interrupted ("+tc.sig.String()+"); stopped, work directory removed") {
				t.Errorf("stderr does not report the interruption:\n%s", stderr.String())
			}
			if left := sandboxtest.Leftovers(scratch, tmp); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestChecksBeforeBuilding: a scratch root, golden file or cache that
// cannot be used is a usage error before anything is built or run (exit 2,
// the one usage line: no progress line, which the build and layer 1 log),
// naming the variable or the flag.
func TestChecksBeforeBuilding(t *testing.T) {
	scratch := sandboxtest.TempDir(t, "dshsim-kmatrix-checks-")
	file := filepath.Join(scratch, "file")
	if err := os.WriteFile(file, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(scratch, "missing")
	golden := filepath.Join(scratch, "golden.txt")
	if err := os.WriteFile(golden, []byte("m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, scratch string
		args          []string
		want          string
	}{
		{"scratch root missing", missing, []string{"-layer1"}, sandboxtest.ScratchEnv + "=" + missing + ": no such directory"},
		{"scratch root a file", file, []string{"-layer1"}, sandboxtest.ScratchEnv + "=" + file + ": not a directory"},
		{"-golden missing", scratch, []string{"-layer1", "-golden", missing}, "-golden " + missing + ": no such file (-update or DSHSIM_UPDATE=1 writes it)"},
		{"-golden a directory", scratch, []string{"-layer1", "-golden", scratch}, "-golden " + scratch + ": is a directory"},
		{"-golden's directory missing with -update", scratch, []string{"-layer1", "-update", "-golden", filepath.Join(missing, "g.txt")}, "-golden " + filepath.Join(missing, "g.txt") + ": its parent " + missing + " is not a directory"},
		{"-cache under a file", scratch, []string{"-golden", golden, "-cache", filepath.Join(file, "cache")}, "-cache " + filepath.Join(file, "cache") + ": " + file + " is not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(sandboxtest.ScratchEnv, tc.scratch)
			var stdout, stderr bytes.Buffer
			code := kernels.Main(tc.args, &stdout, &stderr)
			want := "kernel-matrix: " + tc.want
			if code != 2 || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and the one line %q...", code, stdout.String(), stderr.String(), want)
			}
		})
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s was made", missing)
	}
}

// TestUnwritableCacheIsAUsageError: as a user who may not write it, a
// -cache is refused before anything is built, naming the flag.
func TestUnwritableCacheIsAUsageError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes a mode-0555 directory (CAP_DAC_OVERRIDE); the unprivileged pass runs this")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(t.TempDir(), "golden.txt")
	if err := os.WriteFile(golden, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(sandboxtest.ScratchEnv, sandboxtest.TempDir(t, "dshsim-kmatrix-checks-"))
	var stdout, stderr bytes.Buffer
	code := kernels.Main([]string{"-golden", golden, "-cache", filepath.Join(dir, "cache")}, &stdout, &stderr)
	want := "kernel-matrix: -cache " + filepath.Join(dir, "cache") + ": " + dir + " is not writable (permission denied); run kernel-matrix -h for usage\n"
	if code != 2 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
}
