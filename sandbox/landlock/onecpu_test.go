package landlock

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestOneCPU runs the built runner with GOMAXPROCS=1, as on a one-vCPU
// machine (the kernel matrix boots 6.12 with one vCPU): the restricted thread
// must still be found off the main thread. Before GoOffMainThread, --probe
// retried forever on the main thread there and hung.
func TestOneCPU(t *testing.T) {
	requireLandlock(t)
	bin := sandboxtest.Runner(t)
	outside := sandboxtest.TempDir(t, "dshsim-onecpu-")
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{name: "probe answers", args: []string{"--probe"}, wantCode: 0, wantOut: "landlock: "},
		{name: "confined write outside is denied", args: []string{"--ro", "/", "--rw", "/dev/null", "--", "sh", "-c", "echo x > " + outside + "/f"}, wantCode: 2},
		{name: "confined command runs", args: []string{"--ro", "/", "--rw", "/dev/null", "--", "echo", "ran"}, wantCode: 0, wantOut: "ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 5; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				cmd := exec.CommandContext(ctx, bin, tc.args...)
				cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
				out, err := cmd.Output()
				hung := ctx.Err() == context.DeadlineExceeded
				cancel()
				if hung {
					t.Fatalf("run %d: runner hung with GOMAXPROCS=1", i)
				}
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != tc.wantCode || !strings.HasPrefix(string(out), tc.wantOut) {
					t.Fatalf("run %d: exit %d, stdout %q; want exit %d, stdout starting %q", i, code, out, tc.wantCode, tc.wantOut)
				}
			}
			if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
				t.Error("the confined write outside landed")
			}
		})
	}
}
