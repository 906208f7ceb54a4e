package oracle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
	"github.com/dshsim/dshsim/internal/waittest"
)

// need returns the oracle, or skips naming DSHSIM_ORACLE (or the missing
// private /tmp).
func need(t *testing.T) *Oracle {
	t.Helper()
	o, err := FromEnv()
	if err != nil {
		t.Skip(err)
	}
	isolate.Require(t)
	return o
}

// needAgent is need's oracle, or skips when its installed agent scripts
// are not this tree's (another tree's driver).
func needAgent(t *testing.T) *Oracle {
	t.Helper()
	o := need(t)
	if err := o.SameAgent("agent"); err != nil {
		t.Skip(err)
	}
	return o
}

// listing is every path under dir with its size and modification time.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Name() == "node_modules" && p != dir {
			return fs.SkipDir // npm's tree: too large to list, and nothing writes there
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s\n", p, fi.Size(), fi.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// copyRecording copies transcripts/<src> to a fresh directory named name.
func copyRecording(t *testing.T, src, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := recording.CopyTree(filepath.Join(root, "transcripts", src), dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func settingsOf(t *testing.T, dir string) Settings {
	t.Helper()
	rec := recordingtest.Load(t, dir)
	s, err := SettingsOf(rec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReplayMatchesAndLeavesNothing: upstream replays a spilling recording
// of upstream's MATCH, under a name of its own so that its fixed spill root
// /tmp/dsh-acp-snap-<hash> is this test's; afterwards the recording, the
// oracle's directory and the host's /tmp are as they were.
func TestReplayMatchesAndLeavesNothing(t *testing.T) {
	o := need(t)
	name := "oracle-" + filepath.Base(filepath.Dir(t.TempDir()))
	dir := copyRecording(t, "bash-spill", name)
	sum := sha256.Sum256([]byte(name))
	spillRoot := "/tmp/dsh-acp-snap-" + hex.EncodeToString(sum[:])[:9]
	beforeRec, beforeOracle := listing(t, dir), listing(t, o.Dir())
	res, err := o.Replay(context.Background(), dir, Options{Settings: settingsOf(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Match() {
		t.Fatalf("%s: %s\n%s", name, res.Verdict(), res.Files["stderr.txt"])
	}
	for _, f := range []string{"harvest.norm.jsonl", "fixture.norm.jsonl", "raw-stdout.txt", "raw-session.0.jsonl"} {
		if len(res.Files[f]) == 0 {
			t.Errorf("no %s among the run's files (%d files)", f, len(res.Files))
		}
	}
	if !bytes.Equal(res.Files["harvest.norm.jsonl"], res.Files["fixture.norm.jsonl"]) {
		t.Error("MATCH, but the two normalised logs differ")
	}
	if after := listing(t, dir); after != beforeRec {
		t.Errorf("the recording changed:\n%s\nthen\n%s", beforeRec, after)
	}
	if after := listing(t, o.Dir()); after != beforeOracle {
		t.Errorf("the oracle's directory changed:\n%s\nthen\n%s", beforeOracle, after)
	}
	if _, err := os.Lstat(spillRoot); err == nil {
		t.Errorf("%s is left in the host's /tmp", spillRoot)
	}
}

// TestReplayReportsADiff: a recording whose tool result was edited is a DIFF
// of session.jsonl, and the two normalised logs show the edit.
func TestReplayReportsADiff(t *testing.T) {
	o := need(t)
	dir := copyRecording(t, "bash-tool-turn", "bash-tool-turn")
	log := filepath.Join(dir, recording.SessionFile)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	const from, to = `"text":"TERMINAL_OK\n"`, `"text":"TERMINAL_KO\n"`
	if !bytes.Contains(data, []byte(from)) {
		t.Fatalf("%s has no %s to edit", log, from)
	}
	if err := os.WriteFile(log, bytes.Replace(data, []byte(from), []byte(to), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := o.Replay(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionMatch || !res.StdoutMatch || res.Verdict() != "DIFF (session.jsonl)" {
		t.Fatalf("verdict %s, want DIFF (session.jsonl)", res.Verdict())
	}
	if !bytes.Contains(res.Files["fixture.norm.jsonl"], []byte("TERMINAL_KO")) || !bytes.Contains(res.Files["harvest.norm.jsonl"], []byte(`TERMINAL_OK\n`)) {
		t.Error("the normalised logs do not show the edited text and upstream's")
	}
	out := t.TempDir()
	if err := res.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "harvest.norm.jsonl")); err != nil {
		t.Error(err)
	}
}

// TestConcurrentRunsDoNotMeet: two upstream runs of one spilling recording
// at once (one fixed spill root, one /tmp/dsh-subprocess-* naming scheme)
// both match.
func TestConcurrentRunsDoNotMeet(t *testing.T) {
	o := need(t)
	dir := filepath.Join(root, "transcripts", "bash-spill")
	set := settingsOf(t, dir)
	var wg sync.WaitGroup
	res := make([]*Outcome, 2)
	errs := make([]error, 2)
	for i := range res {
		wg.Go(func() { res[i], errs[i] = o.Replay(context.Background(), dir, Options{Settings: set}) })
	}
	waittest.Within(t, waittest.BatchDeadline, "the two upstream runs to end", wg.Wait)
	for i := range res {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if !res[i].Match() {
			t.Errorf("run %d: %s", i, res[i].Verdict())
		}
	}
}

// TestRecordFromAScript: a two-step script becomes a recording upstream
// reproduces, whose tool result is upstream's bash output; the file its
// command writes in /tmp stays in the run's private /tmp.
func TestRecordFromAScript(t *testing.T) {
	o := need(t)
	marker := "/tmp/oracle-marker-" + filepath.Base(filepath.Dir(t.TempDir()))
	s, err := ParseScript([]byte(`{"prompts":["Run it."],"workspace":{"a.txt":"seeded\n"},` +
		`"turns":[[{"calls":[["bash",{"command":"cat a.txt; echo done; touch ` + marker + `","description":"Cat"}]]},{"text":"DONE"}]]}`))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := o.Record(context.Background(), "record-test", s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Refresh.Match() && len(rec.Refresh.Report) == 0 || !rec.Stable() {
		t.Fatalf("refresh %v, check %s", rec.Refresh.Report, rec.Check.Verdict())
	}
	log := string(rec.Files[recording.SessionFile])
	if !strings.Contains(log, `"text":"seeded\ndone\n"`) || !strings.Contains(log, `"type":"tool/result"`) {
		t.Errorf("the recording lacks upstream's bash result:\n%s", log)
	}
	if _, err := os.Lstat(marker); err == nil {
		os.Remove(marker)
		t.Errorf("the script's %s was written in the host's /tmp", marker)
	}
	dir := filepath.Join(t.TempDir(), "record-test")
	if err := rec.Write(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := recording.Load(dir); err != nil {
		t.Errorf("the written recording does not load: %v", err)
	}
}

// TestSameAgent: an oracle whose agent scripts are the tree's is current;
// one installed from another tree (a file differs) is named stale.
func TestSameAgent(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	if err := recording.CopyTree("agent", agent); err != nil {
		t.Fatal(err)
	}
	o := &Oracle{dir: dir}
	if err := o.SameAgent("agent"); err != nil {
		t.Errorf("a copy of the tree's agent: %v", err)
	}
	if err := os.WriteFile(filepath.Join(agent, "cordis.snapshot.yml"), []byte("# older\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := o.SameAgent("agent"); err == nil || !strings.Contains(err.Error(), "agent/cordis.snapshot.yml is not the tree's") {
		t.Errorf("a changed overlay: %v", err)
	}
}
