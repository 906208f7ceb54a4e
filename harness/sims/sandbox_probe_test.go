package sims

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/sandbox"
)

// TestSandboxSimIgnoresAFailingProbe plants the cause of the drift seen on a
// loaded machine: bwrap's availability probe fails (there it did not answer
// within the probe timeout) while bwrap itself works, so the default chain
// falls through to Landlock. The sandbox sim pins bwrap: its files must
// still equal the committed ones, and its log must say why the probe failed.
func TestSandboxSimIgnoresAFailingProbe(t *testing.T) {
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skipf("bubblewrap is not installed (the sandbox sim needs it): %v", err)
	}
	// A bwrap on PATH that fails its probe (the probe's exact argv) and
	// runs everything else through the real one.
	dir := t.TempDir()
	probe := strings.Join(sandbox.BwrapProbeArgs(), " ")
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$*\" = %q ]; then echo 'bwrap: planted probe failure' >&2; exit 1; fi\nexec %q \"$@\"\n", probe, real)
	if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if sandbox.ProbeBwrap(t.Context()) {
		t.Fatal("the planted bwrap passed its probe")
	}
	var sim harness.Sim
	for _, s := range All() {
		if s.Name == "sandbox" {
			sim = s
		}
	}
	var mu sync.Mutex
	var log strings.Builder
	files, err := harness.RunSim(sim, harness.Root(t), func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&log, format+"\n", args...)
	})
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(harness.Root(t), harness.SnapshotsDir)
	for _, name := range sim.Files {
		d, total, err := harness.CompareFile(snap, name, harness.SnapshotsDir+"/"+name, files[name], 5)
		if err != nil {
			t.Fatal(err)
		}
		if total > 0 {
			t.Errorf("%s changed when bwrap's probe failed:\n%s", name, harness.FormatDrifts(d, total))
		}
	}
	for _, want := range []string{"the default chain's probe of bwrap failed: probe bwrap: exit status 1: bwrap: planted probe failure", `the default chain selected "landlock" here, not bwrap`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the sim's log does not say %q:\n%s", want, log.String())
		}
	}
}
