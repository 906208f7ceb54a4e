package replay_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
)

// requireOracle skips unless the oracle is installed (CI installs it),
// naming DSHSIM_ORACLE.
func requireOracle(t *testing.T) *oracle.Oracle {
	t.Helper()
	isolate.Require(t)
	o, err := oracle.FromEnv()
	if err != nil {
		t.Skip(err)
	}
	return o
}

// upstreamReplay has upstream's suite replay the recording in dir with the
// overlay switches it needs (its sandbox mode, spill, ...).
func upstreamReplay(t *testing.T, o *oracle.Oracle, dir string) *oracle.Outcome {
	t.Helper()
	rec := recordingtest.Load(t, dir)
	set, err := oracle.SettingsOf(rec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := o.Replay(context.Background(), dir, oracle.Options{Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func upstreamMatches(t *testing.T, o *oracle.Oracle, dir string) {
	t.Helper()
	if res := upstreamReplay(t, o, dir); !res.Match() {
		t.Fatalf("upstream's suite does not reproduce %s: %s\n%s", dir, res.Verdict(), res.Files["stderr.txt"])
	}
}

// TestRefreshedRecordingsPassUpstream refreshes recordings (one whose
// workspace drifted, so the refresh rewrites its read result; one of ours
// written by hand; upstream's under workspace-write with an approval, and
// with spill) and has upstream's own suite replay each refreshed recording:
// stdout and session.jsonl MATCH.
func TestRefreshedRecordingsPassUpstream(t *testing.T) {
	skipSweepUnderShort(t)
	o := requireOracle(t)
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
			upstreamMatches(t, o, dir)
		})
	}
}

// TestUpstreamSeesADriftedRecording is the control: changed-seed as it is
// (its workspace says goodbye, its log hello) does not pass upstream's
// suite, so a MATCH above is upstream's verdict, not the runner's.
func TestUpstreamSeesADriftedRecording(t *testing.T) {
	o := requireOracle(t)
	dir := filepath.Join(root, "testdata/replay/flagged/changed-seed")
	if res := upstreamReplay(t, o, dir); !res.StdoutMatch || res.SessionMatch {
		t.Fatalf("upstream's verdict on a drifted log: %s (want DIFF of session.jsonl alone)", res.Verdict())
	}
}

// TestRecordedSessionPassesUpstream records the scenario against the
// loopback server and has upstream's own suite replay the recording.
func TestRecordedSessionPassesUpstream(t *testing.T) {
	o := requireOracle(t)
	f := newFakeServer(t, scenarioSteps)
	out, err := record(t, f, writeScenario(t, true), recordOptions(f))
	if err != nil {
		t.Fatal(err)
	}
	upstreamMatches(t, o, out)
}

// TestRefreshedChildLogsPassUpstream refreshes a recording with a child
// and a grandchild (our stack writes every session.<n>.jsonl back) and has
// upstream's suite replay it: stdout, session.jsonl and each child log
// MATCH. It needs an oracle installed from this tree (its overlay's
// delegation rows).
func TestRefreshedChildLogsPassUpstream(t *testing.T) {
	o := requireOracle(t)
	if err := o.SameAgent(filepath.Join(root, "harness", "oracle", "agent")); err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "subagent-oracle-depth")
	if err := recording.CopyTree(filepath.Join(root, "testdata/replay/oracle/subagent-oracle-depth"), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := replay.Refresh(context.Background(), dir, replay.Options{}); err != nil {
		t.Fatal(err)
	}
	res := upstreamReplay(t, o, dir)
	if !res.Match() || len(res.ChildMatch) != 2 {
		t.Fatalf("upstream's verdict on our refreshed child logs: %s (%v)", res.Verdict(), res.Report)
	}
}
