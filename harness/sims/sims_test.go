package sims

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/simcli"
	"github.com/dshsim/dshsim/harness/snippets"
)

// fresh runs every registered sim once per test binary; TestSims and
// TestDocsPage share the outputs.
var fresh = sync.OnceValues(func() (map[string]map[string][]byte, map[string]error) {
	root, err := harness.FindRoot(".")
	files := map[string]map[string][]byte{}
	errs := map[string]error{}
	for _, s := range All() {
		if err != nil {
			errs[s.Name] = err
			continue
		}
		files[s.Name], errs[s.Name] = harness.RunSim(s, root, nil)
	}
	return files, errs
})

// TestTable: the table is sorted by name, names and files are distinct,
// every sim has a Run and files (harness.CheckSims, which dsh-sim runs too).
func TestTable(t *testing.T) {
	if err := harness.CheckSims(All()); err != nil {
		t.Fatal(err)
	}
}

// TestSims runs every sim of the table (one subtest each) and compares its
// files line by line with the committed ones under snapshots/. With
// DSHSIM_UPDATE=1 it writes them instead.
func TestSims(t *testing.T) {
	sims := All()
	if len(sims) == 0 {
		t.Fatal("no sims in the table of package harness/sims")
	}
	snap := filepath.Join(harness.Root(t), harness.SnapshotsDir)
	files, errs := fresh()
	for _, s := range sims {
		t.Run(s.Name, func(t *testing.T) {
			if err := errs[s.Name]; err != nil {
				t.Fatal(err)
			}
			for _, name := range s.Files {
				got := files[s.Name][name]
				if harness.Updating() {
					if _, err := harness.WriteFile(snap, name, got); err != nil {
						t.Fatal(err)
					}
					continue
				}
				d, total, err := harness.CompareFile(snap, name, harness.SnapshotsDir+"/"+name, got, 5)
				if err != nil {
					t.Fatal(err)
				}
				if total > 0 {
					t.Errorf("%s drifted from the fresh run (update on purpose: %s=1 go test ./harness/sims, or make sim):\n%s",
						name, harness.UpdateEnv, harness.FormatDrifts(d, total))
				}
			}
		})
	}
}

// TestSimsDeterministic runs every sim a second time: the files must be
// byte-identical to the first run's (an unnormalised time, id, pid or path
// shows up here before it shows up on another machine). Skipped with -short.
func TestSimsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: sims run once")
	}
	root := harness.Root(t)
	first, errs := fresh()
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			if errs[s.Name] != nil {
				t.Skipf("first run failed (reported by TestSims): %v", errs[s.Name])
			}
			again, err := harness.RunSim(s, root, nil)
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			for _, name := range s.Files {
				if d := harness.LineDiff(harness.SnapshotsDir+"/"+name, first[s.Name][name], again[name]); d != "" {
					t.Errorf("two runs differ (want: first run, got: second run):\n%s", d)
				}
			}
		})
	}
}

// TestNoUnclaimedSnapshots: every file under snapshots/ belongs to a sim.
func TestNoUnclaimedSnapshots(t *testing.T) {
	left, err := harness.UnclaimedFiles(filepath.Join(harness.Root(t), harness.SnapshotsDir), All())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range left {
		t.Errorf("%s/%s: no registered sim produces this file (delete it, or register its sim)", harness.SnapshotsDir, f)
	}
}

// TestDocsPage resolves every include of docs/tools.md against the
// committed files and the fresh run, as dsh-sim -check does.
func TestDocsPage(t *testing.T) {
	root := harness.Root(t)
	page, err := os.ReadFile(filepath.Join(root, "docs", "tools.md"))
	if err != nil {
		t.Fatalf("the docs page that includes the effect files: %v", err)
	}
	files, _ := fresh()
	all := map[string][]byte{}
	for _, fs := range files {
		for name, data := range fs {
			all[name] = data
		}
	}
	src := simcli.PageSource(root, filepath.Join(root, harness.SnapshotsDir), all, All())
	res, err := snippets.Check("docs/tools.md", page, src)
	if err != nil {
		t.Fatal(err)
	}
	if res.Includes == 0 {
		t.Error("docs/tools.md has no --8<-- includes; the page is meant to show the real outputs")
	}
	t.Logf("docs/tools.md: %d includes resolved, %d checked against the fresh run", res.Includes, res.Fresh)
}
