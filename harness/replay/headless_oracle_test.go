package replay_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/oracle/diff"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
)

// TestHeadlessOracleRecordingsMatch replays the recordings upstream's
// headless profile made through the oracle (testdata/replay/headless-oracle),
// each of which must match. gen-headless-34-0 escalates under read-only
// with nobody to ask, and upstream decides the approval unavailable ("no
// approval channel is available"); ours must too (answering cancelled, as
// with an ACP client whose answers ran out, mismatches at
// approval/decided's outcome).
func TestHeadlessOracleRecordingsMatch(t *testing.T) {
	isolate.Require(t)
	ds := dirs(t, diff.HeadlessRecordingsDir)
	first := filepath.Join(root, diff.HeadlessRecordingsDir, "gen-headless-34-0")
	if len(ds) == 0 || ds[0] != first {
		t.Fatalf("recordings %v, want gen-headless-34-0 first", ds)
	}
	log, err := os.ReadFile(filepath.Join(first, "session.expected.jsonl"))
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

// TestAKeptHeadlessCaseReplays: dsh-oracle diff -profile headless -keep
// writes a headless case's recording (upstream's files: the log, stderr,
// dshsim.replay.json, the workspace) under
// testdata/replay/headless-oracle/<name> with its NOTES.md, its script
// under gen/specs and its row in gen/headless.tsv, which loads back as a
// headless spec; the kept recording replays through our stack and
// matches. A second keep of the name is refused, and so is a recording
// holding a secret of the environment.
func TestAKeptHeadlessCaseReplays(t *testing.T) {
	isolate.Require(t)
	src := filepath.Join(root, diff.HeadlessRecordingsDir, "gen-headless-34-0")
	files := map[string][]byte{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == oracle.NotesFile {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ours := replay.Run(context.Background(), []string{src}, replay.RunOptions{Parallel: 1})[0]
	c := diff.GenerateHeadless(34, 0)
	c.Name, c.Settings.Mode = "gen-headless-kept", oracle.ReadOnly
	f := &diff.Finding{Case: c, Minimal: c.Script, MinimalChecked: &diff.Checked{Recorded: &oracle.Recorded{Files: files}, Ours: ours}}
	tree := t.TempDir()
	gen := filepath.Join(tree, diff.GenDir)
	if err := os.MkdirAll(filepath.Join(gen, oracle.SpecsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := diff.KeepIn(tree)(f); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(tree, diff.HeadlessRecordingsDir, c.Name)
	notes, err := os.ReadFile(filepath.Join(kept, oracle.NotesFile))
	if err != nil || !strings.Contains(string(notes), "`DSH_PERMISSION_MODE` = read-only") || !strings.Contains(string(notes), "headless profile") {
		t.Fatalf("NOTES.md %q (%v)", notes, err)
	}
	specs, err := oracle.LoadHeadlessSpecs(gen)
	if err != nil || len(specs) != 1 || !specs[0].Headless || specs[0].Name != c.Name || string(specs[0].Script.JSON()) != string(c.Script.JSON()) {
		t.Fatalf("headless specs %+v (%v)", specs, err)
	}
	if acp, err := oracle.LoadSpecs(gen); err == nil || len(acp) != 0 {
		t.Fatalf("a headless case went into settings.tsv: %v", acp)
	}
	r := replay.Run(context.Background(), []string{kept}, replay.RunOptions{Parallel: 1})[0]
	if r.Verdict != replay.Match || r.Comparison.Total == 0 {
		t.Fatalf("the kept case: %s\n%s", r.Summary(), r.Detail())
	}
	if err := diff.KeepIn(tree)(f); err == nil || !strings.Contains(err.Error(), "kept already") {
		t.Fatalf("a second keep = %v", err)
	}
	t.Setenv("DSHSIM_TEST_API_TOKEN", "no approval channel is available")
	if err := diff.KeepIn(t.TempDir())(f); err == nil || !strings.Contains(err.Error(), "DSHSIM_TEST_API_TOKEN") || strings.Contains(err.Error(), "no approval channel") {
		t.Fatalf("keeping a recording that holds a secret = %v", err)
	}
}
