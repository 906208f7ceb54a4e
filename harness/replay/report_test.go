package replay_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/projection"
)

// mismatchAt is a comparison whose second pair differs in diffs.
func mismatchAt(diffs ...projection.FieldDiff) projection.Comparison {
	call := &projection.Item{Turn: 1, Kind: projection.KindCall, Fields: map[string]any{"name": "bash", "callId": "c1"}}
	result := &projection.Item{Turn: 2, Kind: projection.KindResult, Fields: map[string]any{"callId": "c1"}}
	return projection.Comparison{Matched: 1, Total: 3, Mismatched: 2, Pairs: []projection.Pair{
		{Turn: 1, Expected: call, Got: call, Match: true},
		{Turn: 2, Expected: result, Got: result, Diffs: diffs},
		{Turn: 2, Expected: call, Got: call, Diffs: []projection.FieldDiff{{Path: "later"}}},
	}}
}

// TestFirstDifference: the one line the JUnit failure message and the HTML
// summary show: the error, else the first mismatching event with its first
// field, else the first flag; nothing for a match.
func TestFirstDifference(t *testing.T) {
	text := projection.FieldDiff{Path: "text", Expected: "a", Got: "b"}
	meta := projection.FieldDiff{Path: "meta.exitCode", Expected: 0, Got: 1}
	tests := []struct {
		name string
		r    replay.Result
		want string
	}{
		{"a match says nothing", replay.Result{Verdict: replay.Match, Comparison: mismatchAt(text), Flags: []string{"f"}}, ""},
		{"an error is its message on one line", replay.Result{Verdict: replay.Failed, Error: "session.jsonl:3: field type\nsecond line"},
			"session.jsonl:3: field type second line"},
		{"the first differing event and its one field", replay.Result{Verdict: replay.Mismatch, Comparison: mismatchAt(text)},
			`turn 2, tool/result c1 ok: text: expected "a", got "b"`},
		{"more fields are counted", replay.Result{Verdict: replay.Mismatch, Comparison: mismatchAt(text, meta)},
			`turn 2, tool/result c1 ok: text: expected "a", got "b" (and 1 more field)`},
		{"more fields are counted, plural", replay.Result{Verdict: replay.Mismatch, Comparison: mismatchAt(text, meta, meta)},
			`turn 2, tool/result c1 ok: text: expected "a", got "b" (and 2 more fields)`},
		{"an event before a flag", replay.Result{Verdict: replay.Mismatch, Comparison: mismatchAt(meta), Flags: []string{"stale"}},
			"turn 2, tool/result c1 ok: meta.exitCode: expected 0, got 1"},
		{"the first flag when every event matched", replay.Result{Verdict: replay.Mismatch, Flags: []string{"script exhausted", "stale"}},
			"flag: script exhausted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.FirstDifference(); got != tc.want {
				t.Errorf("FirstDifference() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTextReportNamesServedTools: the text report names, per recording, the
// tools whose bodies were served from the recording, and says nothing of it
// when every tool ran.
func TestTextReportNamesServedTools(t *testing.T) {
	rs := []*replay.Result{
		{Name: "web", Verdict: replay.Match, Served: []string{"lsp_definition", "web_fetch"}},
		{Name: "local", Verdict: replay.Match},
	}
	var b bytes.Buffer
	replay.WriteText(&b, rs, false)
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "web ") || lines[1] != "  served from the recording: lsp_definition, web_fetch" || !strings.HasPrefix(lines[2], "local ") {
		t.Errorf("report:\n%s", b.String())
	}
	if strings.Count(b.String(), "served") != 1 {
		t.Errorf("a recording without served tools names some:\n%s", b.String())
	}
}
