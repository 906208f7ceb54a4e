package sims

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
)

// TestPipelineSimLeavesEtcPasswdUntouched runs the pipeline sim and proves
// the target file is byte-for-byte and metadata-for-metadata unchanged.
func TestPipelineSimLeavesEtcPasswdUntouched(t *testing.T) {
	before := fingerprint(t)
	var sim harness.Sim
	for _, s := range All() {
		if s.Name == "pipeline" {
			sim = s
		}
	}
	files, err := harness.RunSim(sim, harness.Root(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := string(files["txt/pipeline.txt"])
	if n := strings.Count(out, "allowed, body ran"); n != 2 {
		t.Errorf("%d hookups ran the body, want 2 (no guard; outer allow over an inner deny)\n%s", n, out)
	}
	if after := fingerprint(t); after != before {
		t.Fatalf("/etc/passwd changed: before %s, after %s", before, after)
	}
}

func fingerprint(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(PipelineTarget)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(PipelineTarget)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %s %d sha256:%x", fi.ModTime(), fi.Mode(), fi.Size(), sha256.Sum256(data))
}
