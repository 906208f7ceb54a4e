package replay_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/oracle/diff"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestHeadlessOracleRecordingsMatch replays the recordings upstream's
// headless profile made through the oracle (testdata/replay/headless-oracle),
// each checked first for what it shows:
//   - gen-headless-34-0 escalates under read-only with nobody to ask, and
//     upstream decides the approval unavailable ("no approval channel is
//     available"); ours must too (answering cancelled, as with an ACP
//     client whose answers ran out, mismatches at approval/decided's
//     outcome);
//   - pressure-compaction compacts between steps: before step 2 the next
//     request is priced at least the context window (thresholdRatio 1), so
//     upstream compacts with no failed call; ours must too (with no
//     pressure check, the compaction/* events and the checkpoint are
//     missing);
//   - pressure-prune is the same run with a tool result of 9000 characters
//     and the product profile's tool-result pruner: over the threshold
//     before step 2, upstream prunes the result (compaction/prune, the
//     shortened result), measures again, and compacts the prompt and the
//     runtime context, whose price holds upstream's workspace path
//     (shadowedTokenCount); ours must too (with no pruner mounted, the
//     prune events are missing; priced with the replay's own path, the
//     shadowed count differs).
func TestHeadlessOracleRecordingsMatch(t *testing.T) {
	isolate.Require(t)
	shows := map[string][]string{
		"gen-headless-34-0":   {`"outcome":"unavailable"`, "no approval channel is available"},
		"pressure-compaction": {`"type":"step/end","seq":19`, `"type":"compaction/start","seq":20`, `"contextWindow":8600`},
		"pressure-prune":      {`"type":"step/end","seq":19`, `"type":"compaction/prune","seq":20`, `"type":"compaction/start","seq":22`, `"contextWindow":10000`},
	}
	ds := dirs(t, diff.HeadlessRecordingsDir)
	for name := range shows {
		if !slices.Contains(ds, filepath.Join(root, diff.HeadlessRecordingsDir, name)) {
			t.Fatalf("recordings %v lack %s", ds, name)
		}
	}
	for _, d := range ds {
		log, err := os.ReadFile(filepath.Join(d, "session.expected.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shows[filepath.Base(d)] {
			if !strings.Contains(string(log), s) {
				t.Fatalf("%s no longer holds %s", d, s)
			}
		}
		if strings.Contains(string(log), "CONTEXT_WINDOW_EXCEEDED") {
			t.Fatalf("%s: a failed call, not the pressure check, could have compacted it", d)
		}
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

// TestPressureCheckNamesWhatItCannotKnow: the pressure-compaction
// recording with an input of the pressure check taken away (or changed)
// does not guess it. Without upstreamCwd, the path's length is bounded
// (1 to 4095 bytes): the first check is above the threshold at any
// length, but whether the compaction brought the request below it depends
// on the length, so the replay fails naming the setting. A header
// scrubbed to {{system}} leaves the envelope unbounded: the replay fails
// naming the file, line and field. A context window twice the recorded
// one compacts nothing, and the recording mismatches.
func TestPressureCheckNamesWhatItCannotKnow(t *testing.T) {
	isolate.Require(t)
	for _, tc := range []struct {
		name   string
		edit   func(settings map[string]any, log string) string
		errors string // "": a mismatch
	}{
		{"no upstreamCwd", func(s map[string]any, log string) string {
			delete(s, "upstreamCwd")
			return log
		}, "the workspace path upstream ran in (written {{cwd}}; the setting upstreamCwd states it): the next request is priced between"},
		{"a scrubbed system prompt", func(s map[string]any, log string) string {
			return scrubSystem(t, log)
		}, "session.expected.jsonl line 12: request/header's system, which the recording holds as the normalised token {{system}}"},
		{"a larger context window", func(s map[string]any, log string) string {
			return strings.Replace(log, `"contextWindow":8600`, `"contextWindow":17200`, 1)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pressure-compaction")
			if err := recording.CopyTree(filepath.Join(root, diff.HeadlessRecordingsDir, "pressure-compaction"), dir); err != nil {
				t.Fatal(err)
			}
			settings := map[string]any{}
			readJSON(t, filepath.Join(dir, "dshsim.replay.json"), &settings)
			logPath := filepath.Join(dir, "session.expected.jsonl")
			log, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			edited := tc.edit(settings, string(log))
			writeJSON(t, filepath.Join(dir, "dshsim.replay.json"), settings)
			if err := os.WriteFile(logPath, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			r := replay.Replay(context.Background(), dir, replay.Options{})
			if tc.errors == "" {
				if r.Verdict != replay.Mismatch {
					t.Fatalf("want a mismatch: %s\n%s", r.Summary(), r.Detail())
				}
				return
			}
			if r.Verdict != replay.Failed || !strings.Contains(r.Summary()+r.Detail(), "pressure compaction before turn 1 step 2: "+tc.errors) {
				t.Fatalf("want an error containing %q: %s\n%s", tc.errors, r.Summary(), r.Detail())
			}
		})
	}
}

// scrubSystem is log with its request/header's system prompt written
// {{system}}, as upstream's suite scrubs headers.
func scrubSystem(t *testing.T, log string) string {
	t.Helper()
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		if !strings.Contains(l, `"type":"request/header"`) {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		e["data"].(map[string]any)["header"].(map[string]any)["system"] = "{{system}}"
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = string(b)
		return strings.Join(lines, "\n")
	}
	t.Fatal("no request/header")
	return ""
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
