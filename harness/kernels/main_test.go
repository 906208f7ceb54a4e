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
