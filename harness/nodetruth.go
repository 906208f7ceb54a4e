package harness

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeTruth derives a package's pinned JavaScript truth again, so that its
// expectations are JavaScript's and not hand-written: it runs node on
// dir/truth.js with dir/cases.json and decodes what node printed into fresh
// for the caller to compare with dir/node-truth.json. With DSHSIM_UPDATE=1 it
// writes node's output to dir/node-truth.json instead and returns false:
// there is nothing left to compare. Without node on PATH the test is skipped,
// naming what it needs.
//
//	var fresh struct{ Rows []truthRow }
//	if !harness.NodeTruth(t, "testdata", &fresh) {
//		return
//	}
func NodeTruth(t testing.TB, dir string, fresh any) (compare bool) {
	t.Helper()
	pinned := filepath.Join(dir, "node-truth.json")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("needs node (a JavaScript engine) on PATH to re-derive %s", pinned)
	}
	script := filepath.Join(dir, "truth.js")
	out, err := exec.Command(node, script, filepath.Join(dir, "cases.json")).Output()
	if err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	if Updating() {
		if err := os.WriteFile(pinned, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err := json.Unmarshal(out, fresh); err != nil {
		t.Fatalf("node %s printed no JSON: %v", script, err)
	}
	return true
}
