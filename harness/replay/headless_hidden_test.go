package replay_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// hiddenVerdicts are the verdicts of testdata/replay/headless-hidden: the
// scenarios of upstream's headless suite whose recordings were not given,
// made by upstream's rc.8 where its published packages run them, else
// constructed (each one's README says how). A match rests on the scenario's
// suite settings by name (FrontendSuiteSettings[Headless]): without
// pty-tools' profile, provider-retry's retry policy, the credentials'
// prompt, the resumes' seed and preparation or the cold child's fixture,
// each fails. Failed holds the one line the replay must give instead.
var hiddenVerdicts = map[string]string{
	"pty-tools":                replay.Match,
	"provider-retry":           replay.Match,
	"provider-retry-product":   replay.Match,
	"missing-credential":       replay.Match,
	"invalid-credential":       replay.Match,
	"offline-edit":             replay.Match,
	"precedence-change":        replay.Match,
	"descriptorless-child":     replay.Match,
	"startup-activation-error": "startup-activation-error: not a session: stderr.expected.txt only: the headless run failed before any session began",
	"newer-format":             "newer-format/session.expected.jsonl:1: field version: log format v99, but upstream's rc.8 (and this replay) reads only v0: the log was written by a newer harness",
	"unknown-event":            `unknown-event/session.expected.jsonl:4: field type: unknown event type "future/event"`,
}

// TestHeadlessHiddenRecordings replays the recordings of upstream's hidden
// headless scenarios and asserts each one's verdict.
func TestHeadlessHiddenRecordings(t *testing.T) {
	isolate.Require(t)
	ds := dirs(t, "testdata/replay/headless-hidden")
	if len(ds) != len(hiddenVerdicts) {
		t.Fatalf("%d recordings in testdata/replay/headless-hidden, want %d", len(ds), len(hiddenVerdicts))
	}
	for _, r := range replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 1}) {
		want, ok := hiddenVerdicts[r.Name]
		switch {
		case !ok:
			t.Errorf("%s: a recording without a verdict in hiddenVerdicts", r.Name)
		case want == replay.Match && (r.Verdict != replay.Match || r.Comparison.Total == 0):
			t.Errorf("%s: %s\n%s", r.Name, r.Summary(), r.Detail())
		case want != replay.Match && (r.Verdict != replay.Failed || !strings.HasPrefix(r.Error, want) || strings.Contains(r.Error, "\n")):
			t.Errorf("%s: verdict %s (%q), want one line starting %q", r.Name, r.Verdict, r.Error, want)
		}
	}
}

// TestHeadlessHiddenNeedTheirSettings: each matching hidden recording
// fails when its suite settings by name are withheld (replayed under a
// name no suite scenario has), so the settings are what makes it match.
func TestHeadlessHiddenNeedTheirSettings(t *testing.T) {
	isolate.Require(t)
	tmp := t.TempDir()
	var renamed []string
	for _, name := range []string{"pty-tools", "provider-retry", "missing-credential", "offline-edit", "descriptorless-child"} {
		dst := filepath.Join(tmp, "unnamed-"+name)
		if err := recording.CopyTree(filepath.Join(root, "testdata/replay/headless-hidden", name), dst); err != nil {
			t.Fatal(err)
		}
		renamed = append(renamed, dst)
	}
	for _, r := range replay.Run(context.Background(), renamed, replay.RunOptions{Parallel: 1}) {
		if r.Verdict == replay.Match {
			t.Errorf("%s matched without its suite settings: %s", r.Name, r.Summary())
		}
	}
}
