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

// TestJSONRPCOracleRecordingsMatch replays the recordings upstream's SDK
// path made through the oracle (testdata/replay/jsonrpc-oracle):
// jsonrpc-editor-unobserved edits with str_replace_editor in the minimal
// composition, which mounts no read-before-write policy, and upstream's
// editor checks its arguments and writes with no view first; ours must too
// (sharing the file tools' observations answers FS_NOT_OBSERVED at the
// first call).
func TestJSONRPCOracleRecordingsMatch(t *testing.T) {
	isolate.Require(t)
	ds := dirs(t, "testdata/replay/jsonrpc-oracle")
	if len(ds) != 1 {
		t.Fatalf("%d recordings in testdata/replay/jsonrpc-oracle, want 1", len(ds))
	}
	log, err := os.ReadFile(filepath.Join(ds[0], "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Invalid `insert_line` parameter: -1", "does not exist. Please provide a valid path.", "has been edited successfully"} {
		if !strings.Contains(string(log), w) {
			t.Fatalf("the recording no longer shows %q", w)
		}
	}
	for _, r := range replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 1}) {
		if r.Verdict != replay.Match || r.Comparison.Total == 0 {
			t.Errorf("%s: %s\n%s", r.Name, r.Summary(), r.Detail())
		}
	}
}
