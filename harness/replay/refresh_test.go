package replay_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/fileset"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
	"github.com/dshsim/dshsim/internal/waittest"
)

// departures are the oracle recordings our stack does not reproduce (named
// in docs/replay.md): a refresh rewrites their differing results.
// runner-missing-job-output matches, but a refresh moves its job notice's
// splice to after the starting step, where the spawn-failure departure
// queues it.
var departures = []string{"escalation-mixed", "fs-search-edges", "diff-spawn-failure-notice", "runner-missing-job-output", "diff-leftover-output"}

// allRecordings lists every recording directory under transcripts/ and
// testdata/replay/ (bad ones included).
func allRecordings(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, top := range []string{"transcripts", "testdata/replay"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == recording.WorkspaceDir {
				return filepath.SkipDir
			}
			if d.IsDir() && recording.IsRecording(p) {
				out = append(out, p)
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 100 {
		t.Fatalf("found %d recordings", len(out))
	}
	return out
}

// snapshot reads every regular file of a tree.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func changedFiles(a, b map[string]string) []string {
	var out []string
	for k, v := range b {
		if a[k] != v {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k+" (removed)")
		}
	}
	slices.Sort(out)
	return out
}

// TestRefreshIsIdempotent refreshes a copy of every recording under
// transcripts/ and testdata/replay/ and then refreshes each changed one
// again: the second refresh changes nothing. A recording that cannot be
// replayed (testdata/replay/bad) is refused and left as it was. Upstream's
// recordings that our stack reproduces (all of transcripts/, the oracle's
// but the named departures) refresh unchanged at once: our log is
// upstream's once the committed values are carried over.
func TestRefreshIsIdempotent(t *testing.T) {
	skipSweepUnderShort(t)
	isolate.Require(t)
	work := t.TempDir()
	var dirs []string
	for _, d := range allRecordings(t) {
		// -refresh rewrites ACP recordings only (TestRefreshRefusesAFrontend)
		if fe, err := recording.DetectFrontend(d, filepath.Base(d)); err == nil && fe == recording.ACP {
			dirs = append(dirs, d)
		}
	}
	type outcome struct {
		dir, copy string
		first     []string
		err       error
		before    map[string]string
	}
	outs := make([]*outcome, len(dirs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, d := range dirs {
		rel, _ := filepath.Rel(root, d)
		o := &outcome{dir: rel, copy: filepath.Join(work, strings.ReplaceAll(rel, string(filepath.Separator), "__"), filepath.Base(d))}
		outs[i] = o
		if err := recording.CopyTree(d, o.copy); err != nil {
			t.Fatal(err)
		}
		o.before = snapshot(t, o.copy)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_, o.err = replay.Refresh(context.Background(), o.copy, replay.Options{})
			o.first = changedFiles(o.before, snapshot(t, o.copy))
		})
	}
	waittest.Within(t, waittest.BatchDeadline, "the refreshes to end", wg.Wait)
	for _, o := range outs {
		t.Run(o.dir, func(t *testing.T) {
			bad := strings.Contains(o.dir, "testdata/replay/bad/")
			switch {
			case bad && o.err == nil:
				t.Fatalf("a bad recording was refreshed")
			case bad:
				if len(o.first) > 0 {
					t.Fatalf("refused (%v) but changed %v", o.err, o.first)
				}
				return
			case o.err != nil:
				t.Fatalf("refresh: %v", o.err)
			}
			upstream := strings.HasPrefix(o.dir, "transcripts/") || strings.HasPrefix(o.dir, "testdata/replay/oracle/")
			if upstream && !slices.Contains(departures, filepath.Base(o.dir)) && len(o.first) > 0 {
				t.Errorf("upstream's recording, which our stack reproduces, changed on refresh: %v", o.first)
			}
			if len(o.first) == 0 {
				return
			}
			once := snapshot(t, o.copy)
			r, err := replay.Refresh(context.Background(), o.copy, replay.Options{})
			if err != nil {
				t.Fatalf("second refresh: %v", err)
			}
			if again := changedFiles(once, snapshot(t, o.copy)); len(again) > 0 || len(r.Changed) > 0 {
				t.Fatalf("the second refresh changed %v (reported %v)", again, r.Changed)
			}
		})
	}
}

// TestRefreshRewritesTheStackSide refreshes changed-seed, whose workspace
// was edited after recording (greeting.txt says goodbye): the read result
// is rewritten from our stack, the model's chunks are kept byte for byte,
// and the refreshed recording matches.
func TestRefreshRewritesTheStackSide(t *testing.T) {
	isolate.Require(t)
	dir := filepath.Join(t.TempDir(), "changed-seed")
	if err := recording.CopyTree(filepath.Join(root, "testdata/replay/flagged/changed-seed"), dir); err != nil {
		t.Fatal(err)
	}
	chunks := func() []string {
		rec := recordingtest.Load(t, dir)
		var out []string
		for _, e := range rec.Events {
			if e.Type == "assistant/chunk" {
				out = append(out, string(e.Data))
			}
		}
		return out
	}
	before := chunks()
	input, _ := os.ReadFile(filepath.Join(dir, recording.InputFile))
	r, err := replay.Refresh(context.Background(), dir, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Result.Verdict != replay.Mismatch || !slices.Contains(r.Changed, recording.SessionFile) {
		t.Fatalf("refresh of a drifted recording: verdict %s, changed %v", r.Result.Verdict, r.Changed)
	}
	if !slices.Equal(before, chunks()) {
		t.Error("the model's chunks changed")
	}
	if after, _ := os.ReadFile(filepath.Join(dir, recording.InputFile)); !bytes.Equal(after, input) {
		t.Error("input.json changed")
	}
	session, _ := os.ReadFile(filepath.Join(dir, recording.SessionFile))
	if !strings.Contains(string(session), `1: goodbye`) {
		t.Error("the refreshed read result does not show the workspace's file")
	}
	if res := replay.Replay(context.Background(), dir, replay.Options{}); res.Verdict != replay.Match {
		t.Fatalf("the refreshed recording does not match: %s\n%s", res.Summary(), res.Detail())
	}
}

// TestHalfReplacedRecording: a recording an interrupted writer left half
// replaced (its journal decided, a file not yet renamed) is refused by a
// replay, naming the journal, and the next refresh completes it first,
// says so, and leaves the recording whole.
func TestHalfReplacedRecording(t *testing.T) {
	isolate.Require(t)
	dir := filepath.Join(t.TempDir(), "fs-read")
	if err := recording.CopyTree(filepath.Join(root, "transcripts", "fs-read"), dir); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, dir)
	stdout := filepath.Join(dir, recording.StdoutFile)
	temp := ".dshsim-new." + recording.StdoutFile + ".1"
	harness.MustWrite(t, filepath.Join(dir, temp), want[recording.StdoutFile])
	harness.MustWrite(t, stdout, "{}\n")
	harness.MustWrite(t, filepath.Join(dir, fileset.JournalFile), `[{"name":"`+recording.StdoutFile+`","temp":"`+temp+`"}]`+"\n")
	if r := replay.Replay(context.Background(), dir, replay.Options{}); r.Verdict != replay.Failed || !strings.Contains(r.Error, fileset.JournalFile) {
		t.Fatalf("a half-replaced recording: %s %q", r.Verdict, r.Error)
	}
	r, err := replay.Refresh(context.Background(), dir, replay.Options{})
	if err != nil || !strings.Contains(r.Recovered, "completed an interrupted replacement of "+recording.StdoutFile) || len(r.Changed) != 0 {
		t.Fatalf("refresh: %v, recovered %q, changed %v", err, r.Recovered, r.Changed)
	}
	if got := snapshot(t, dir); !maps.Equal(got, want) {
		t.Errorf("after the refresh: %v differ", changedFiles(want, got))
	}
}

// TestRefreshRefusesAFrontend: -refresh rewrites ACP recordings only; a
// headless one is refused before anything runs, and left as it was.
func TestRefreshRefusesAFrontend(t *testing.T) {
	src := filepath.Join(root, "transcripts/frontends/examples/headless-agent/tests/snapshots/headless-profile")
	dir := filepath.Join(t.TempDir(), "headless-profile")
	if err := recording.CopyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, recording.SessionExpectedFile))
	if err != nil {
		t.Fatal(err)
	}
	_, err = replay.Refresh(context.Background(), dir, replay.Options{})
	if err == nil || !strings.Contains(err.Error(), "headless-profile: a headless recording: -refresh rewrites ACP recordings") {
		t.Fatalf("Refresh = %v, want a refusal naming the front end", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, recording.SessionExpectedFile))
	if !bytes.Equal(before, after) {
		t.Error("the refused refresh changed the recording")
	}
}
