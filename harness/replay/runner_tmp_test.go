package replay_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestRunnerBesideABinaryUnderTmp: dsh-replay and landlock-run built into a
// directory under /tmp (go build -o /tmp/x/..., a CI cache). The replay's
// child gets a private /tmp, which hid the runner beside the executable:
// every confined call then failed with "no sandbox backend is usable". The
// parent now finds the runner before it isolates and shares it; a recording
// whose bash runs confined (read-only) must match under -backend landlock.
func TestRunnerBesideABinaryUnderTmp(t *testing.T) {
	isolate.Require(t)
	sandboxtest.RequireLandlock(t, 1)
	bin, err := os.MkdirTemp("/tmp", "dshsim-replay-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	replayBin, err := sandboxtest.Build(root, bin, "dsh-replay", "github.com/dshsim/dshsim/cmd/dsh-replay")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandboxtest.BuildRunner(root, bin); err != nil {
		t.Fatal(err)
	}
	rec, err := filepath.Abs(filepath.Join(root, "testdata/replay/oracle/escalation-read-only-bash"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), replayBin, "-backend", "landlock", rec).CombinedOutput()
	if err != nil || strings.Contains(string(out), "no sandbox backend is usable") {
		t.Fatalf("dsh-replay in %s with its runner beside it: %v\n%s", bin, err, out)
	}
}
