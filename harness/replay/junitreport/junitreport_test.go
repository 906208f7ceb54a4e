package junitreport_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/junitreport"
	"github.com/dshsim/dshsim/harness/replay/projection"
)

// hostile holds what a recording's text may: markup, a CDATA end, an
// ampersand, a newline and a terminal escape (which XML 1.0 cannot hold).
const hostile = "<b>&amp; ]]> \"q\"\n\x1b[31mred"

// TestReadBackByAJUnitParser writes the report of a match, a mismatch and an
// error, whose texts hold markup and characters XML cannot hold, and reads
// it back with a JUnit parser (github.com/joshdk/go-junit): one test case
// per recording in order, with its time, the first difference as the
// failure message, the error as an error, the notes and served tools as
// system-out.
func TestReadBackByAJUnitParser(t *testing.T) {
	diff := projection.FieldDiff{Path: "text", Expected: "ok", Got: hostile}
	item := &projection.Item{Turn: 1, Kind: projection.KindResult, Fields: map[string]any{"callId": "c1"}}
	mismatch := &replay.Result{Name: "changed", Dir: "testdata/replay/flagged/changed", Verdict: replay.Mismatch, Duration: 1500 * time.Millisecond,
		Comparison: projection.Comparison{Total: 1, Mismatched: 1, Pairs: []projection.Pair{{Turn: 1, Expected: item, Got: item, Diffs: []projection.FieldDiff{diff}}}},
		Flags:      []string{"script exhausted"}, Notes: []string{"a note " + hostile}}
	results := []*replay.Result{
		{Name: "fs-read", Dir: "transcripts/fs-read", Verdict: replay.Match, Duration: 250 * time.Millisecond, Served: []string{"web_fetch", "lsp_definition"}},
		mismatch,
		{Name: "bad", Dir: "bad", Verdict: replay.Failed, Error: "bad/session.jsonl:8: field type: " + hostile, Duration: 2 * time.Millisecond},
	}
	var b bytes.Buffer
	start := time.Date(2026, 5, 4, 3, 2, 1, 0, time.FixedZone("x", 3600))
	if err := junitreport.Write(&b, results, start, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Ingest(b.Bytes())
	if err != nil {
		t.Fatalf("the report does not parse: %v\n%s", err, b.String())
	}
	if len(suites) != 1 || suites[0].Name != "dsh-replay" || len(suites[0].Tests) != 3 {
		t.Fatalf("want one suite dsh-replay of 3 tests, got %+v", suites)
	}
	s := suites[0]
	if s.Totals.Passed != 1 || s.Totals.Failed != 1 || s.Totals.Error != 1 {
		t.Errorf("totals %+v, want 1 passed, 1 failed, 1 error", s.Totals)
	}
	if s.Properties["time"] != "3.000" || s.Properties["timestamp"] != "2026-05-04T02:02:01" || s.Properties["tests"] != "3" || s.Properties["failures"] != "1" || s.Properties["errors"] != "1" {
		t.Errorf("suite attributes %v", s.Properties)
	}
	clean := strings.ReplaceAll(hostile, "\x1b", "\uFFFD")
	want := []junit.Test{
		{Name: "fs-read", Classname: "dsh-replay.transcripts", Duration: 250 * time.Millisecond, Status: junit.StatusPassed,
			SystemOut: "served from the recording: web_fetch, lsp_definition\n"},
		{Name: "changed", Classname: "dsh-replay.flagged", Duration: 1500 * time.Millisecond, Status: junit.StatusFailed,
			Message: strings.ReplaceAll(mismatch.FirstDifference(), "\x1b", "\uFFFD"), SystemOut: "note: a note " + clean + "\n"},
		{Name: "bad", Classname: "dsh-replay", Duration: 2 * time.Millisecond, Status: junit.StatusError,
			Message: "bad/session.jsonl:8: field type: " + strings.ReplaceAll(clean, "\n", " ")},
	}
	for i, w := range want {
		g := s.Tests[i]
		if g.Name != w.Name || g.Classname != w.Classname || g.Duration != w.Duration || g.Status != w.Status || g.Message != w.Message || g.SystemOut != w.SystemOut {
			t.Errorf("test case %d:\n got %q %q %v %s message %q out %q\nwant %q %q %v %s message %q out %q", i,
				g.Name, g.Classname, g.Duration, g.Status, g.Message, g.SystemOut, w.Name, w.Classname, w.Duration, w.Status, w.Message, w.SystemOut)
		}
	}
	if !strings.HasPrefix(s.Tests[1].Message, "turn 1, tool/result c1 ok: text: ") {
		t.Errorf("the failure message is not the first difference: %q", s.Tests[1].Message)
	}
	if e, ok := s.Tests[1].Error.(junit.Error); !ok || e.Type != "mismatch" || e.Body != strings.ReplaceAll(mismatch.Detail(), "\x1b", "\uFFFD") {
		t.Errorf("failure %#v, want type mismatch and the detail as its text", s.Tests[1].Error)
	}
	if e, ok := s.Tests[2].Error.(junit.Error); !ok || e.Type != "error" || e.Body != "bad/session.jsonl:8: field type: "+clean {
		t.Errorf("error %#v, want type error and the whole error as its text", s.Tests[2].Error)
	}
}

// TestFrontendNamedInTheClassname: a recording of a front end beyond ACP
// has its front end after the suite in its classname; ACP's has none.
func TestFrontendNamedInTheClassname(t *testing.T) {
	results := []*replay.Result{
		{Name: "advanced-toolchain", Dir: "transcripts/advanced-toolchain", Verdict: replay.Match},
		{Name: "advanced-toolchain", Dir: "frontends/snapshots/advanced-toolchain", Stated: replay.Stated{Frontend: "headless"}, Verdict: replay.Match},
	}
	var buf bytes.Buffer
	if err := junitreport.Write(&buf, results, time.Unix(0, 0), time.Second); err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Ingest(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tc := range suites[0].Tests {
		got = append(got, tc.Classname)
	}
	if want := []string{"dsh-replay.transcripts", "dsh-replay.headless.snapshots"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("classnames %q, want %q", got, want)
	}
}
