package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
)

// TestHeadlessOracleRecordingsMatch replays the recordings upstream's
// headless profile made through the oracle (testdata/replay/headless-oracle):
// gen-headless-34-0 escalates under read-only with nobody to ask, and
// upstream decides the approval unavailable ("no approval channel is
// available"); ours must too (answering cancelled, as with an ACP client
// whose answers ran out, mismatches at approval/decided's outcome).
func TestHeadlessOracleRecordingsMatch(t *testing.T) {
	isolate.Require(t)
	ds := dirs(t, "testdata/replay/headless-oracle")
	if len(ds) != 1 {
		t.Fatalf("%d recordings in testdata/replay/headless-oracle, want 1", len(ds))
	}
	log, err := os.ReadFile(filepath.Join(ds[0], "session.expected.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `"outcome":"unavailable"`) || !strings.Contains(string(log), "no approval channel is available") {
		t.Fatal("the recording no longer shows an approval decided unavailable")
	}
	for _, r := range replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 1}) {
		if r.Verdict != replay.Match || r.Comparison.Total == 0 {
			t.Errorf("%s: %s\n%s", r.Name, r.Summary(), r.Detail())
		}
	}
}
