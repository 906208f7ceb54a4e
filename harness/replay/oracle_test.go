package replay_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle/oraclerun"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// requireOracle skips unless the oracle is installed (CI installs it).
func requireOracle(t *testing.T) string {
	t.Helper()
	isolate.Require(t)
	dir := oraclerun.Dir()
	if dir == "" {
		t.Skipf("%s is not set: upstream's code is not installed here (harness/oracle/setup.sh DIR, then export %s=DIR)", oraclerun.EnvVar, oraclerun.EnvVar)
	}
	return dir
}

// oracleEnv is the scenario env upstream's suite runs a recording with:
// its sandbox mode, and the spill overlay for the spill cap it needs.
func oracleEnv(t *testing.T, dir string) map[string]string {
	t.Helper()
	rec, err := recording.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	if pol, err := rec.Policy(); err == nil && pol.Mode != "danger-full-access" {
		env["DSH_PERMISSION_MODE"] = pol.Mode
	}
	if rec.Settings.SpillMaxInlineBytes == 800 {
		env["PROBE_SPILL"] = "1"
	}
	if len(rec.Children) > 0 || strings.HasPrefix(rec.Name, "subagent-") || strings.HasPrefix(rec.Name, "workflow-") {
		env["PROBE_SUBAGENTS"] = "1" // the delegation rows of the reconstructed overlay
	}
	if d := rec.Settings.SubagentMaxDepth; d != nil {
		env["PROBE_MAX_DEPTH"] = strconv.Itoa(*d)
	}
	return env
}

func upstreamMatches(t *testing.T, oracle, dir string) {
	t.Helper()
	res, err := oraclerun.Replay(context.Background(), oracle, dir, oracleEnv(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Match() {
		t.Fatalf("upstream's suite does not reproduce %s:\n%s", dir, res.Output)
	}
}

// TestRefreshedRecordingsPassUpstream refreshes recordings (one whose
// workspace drifted, so the refresh rewrites its read result; one of ours
// written by hand; upstream's under workspace-write with an approval, and
// with spill) and has upstream's own suite replay each refreshed recording:
// stdout and session.jsonl MATCH.
func TestRefreshedRecordingsPassUpstream(t *testing.T) {
	oracle := requireOracle(t)
	for _, src := range []string{"testdata/replay/flagged/changed-seed", "testdata/replay/ours/parallel-reads",
		"transcripts/escalation-approved", "transcripts/bash-spill"} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), filepath.Base(src))
			if err := recording.CopyTree(filepath.Join(root, src), dir); err != nil {
				t.Fatal(err)
			}
			if _, err := replay.Refresh(context.Background(), dir, replay.Options{}); err != nil {
				t.Fatal(err)
			}
			upstreamMatches(t, oracle, dir)
		})
	}
}

// TestUpstreamSeesADriftedRecording is the control: changed-seed as it is
// (its workspace says goodbye, its log hello) does not pass upstream's
// suite, so a MATCH above is upstream's verdict, not the runner's.
func TestUpstreamSeesADriftedRecording(t *testing.T) {
	oracle := requireOracle(t)
	dir := filepath.Join(root, "testdata/replay/flagged/changed-seed")
	res, err := oraclerun.Replay(context.Background(), oracle, dir, oracleEnv(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stdout || res.Session {
		t.Fatalf("upstream's verdict on a drifted log: stdout %v, session %v (want MATCH, DIFF):\n%s", res.Stdout, res.Session, res.Output)
	}
}

// TestRecordedSessionPassesUpstream records the scenario against the
// loopback server and has upstream's own suite replay the recording.
func TestRecordedSessionPassesUpstream(t *testing.T) {
	oracle := requireOracle(t)
	f := newFakeServer(t, scenarioSteps)
	out, err := record(t, f, writeScenario(t, true), recordOptions(f))
	if err != nil {
		t.Fatal(err)
	}
	upstreamMatches(t, oracle, out)
}
