package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/oracle/diff"
)

// TestUsageErrors: each is one stderr line naming the problem, exit 2,
// before anything runs; without DSHSIM_ORACLE the line names the variable.
func TestUsageErrors(t *testing.T) {
	t.Setenv(oracle.Env, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "dsh-oracle: no command (replay, regen, diff or bench)"},
		{[]string{"verify"}, `unknown command "verify"`},
		{[]string{"diff", "-n", "0"}, "-n and -parallel must be at least 1"},
		{[]string{"diff", "extra"}, `unexpected argument "extra"`},
		{[]string{"diff", "-n", "1"}, "DSHSIM_ORACLE is not set"},
		{[]string{"diff", "-keep", "-profile", "goal"}, "-keep with -profile goal: a goal case is not kept in the tree yet"},
		{[]string{"diff", "-keep", "-profile", "jsonrpc"}, "-keep with -profile jsonrpc: a jsonrpc case is not kept in the tree yet"},
		{[]string{"replay"}, "no recording given"},
		{[]string{"replay", "../../../transcripts/fs-read"}, "DSHSIM_ORACLE is not set"},
		{[]string{"regen", "-gen", "../gen", "-o", t.TempDir(), "no-such-spec"}, "no spec matches no-such-spec"},
		{[]string{"bench", "-rounds", "0"}, "-rounds must be at least 1"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(tc.args, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("dsh-oracle %v: exit %d, stderr %q; want one line containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestHelp: -h prints the commands, exit 0.
func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "diff [-n N] [-seed S]") {
		t.Errorf("exit %d, stdout %q", code, stdout.String())
	}
}

// TestBenchPrint: medians per recording, their ratio, skipped recordings
// named, totals of the medians (a skipped one counts in neither).
func TestBenchPrint(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, n := range v {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	b := &BenchResult{
		Names:    []string{"a", "b", "c"},
		Skipped:  []string{"c: upstream's suite does not reproduce it"},
		Ours:     [][]time.Duration{ms(10, 30, 20), ms(100), nil},
		Upstream: [][]time.Duration{ms(1000, 900, 1100), ms(500), nil},
	}
	ours, up := b.Totals()
	if ours != 120*time.Millisecond || up != 1500*time.Millisecond {
		t.Errorf("totals %s %s, want 120ms 1.5s", ours, up)
	}
	var w bytes.Buffer
	b.Print(&w)
	for _, want := range []string{"a                                  20ms         1s    50.0x", "b                                 100ms      500ms     5.0x",
		"skipped (the oracle cannot run it): c:", "total (2, sequential)             120ms       1.5s    12.5x"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, w.String())
		}
	}
}

// TestDiffReportNamesUnstableCases: the report's summary counts the cases
// upstream did not reproduce and the next line names them; a campaign
// without one prints no such line.
func TestDiffReportNamesUnstableCases(t *testing.T) {
	var b strings.Builder
	printReport(&b, &diff.Report{Run: 3, Matched: 1, Unstable: 2, UnstableCases: []string{"gen-35-7", "gen-35-90"}}, 0)
	if want := "1 match, 0 mismatch, 2 unstable upstream (dropped), 0 named departures, 0 upstream errors\n  unstable upstream: gen-35-7 gen-35-90\n"; !strings.Contains(b.String(), want) {
		t.Errorf("report:\n%s\nwant it to hold:\n%s", b.String(), want)
	}
	b.Reset()
	printReport(&b, &diff.Report{Run: 1, Matched: 1}, 0)
	if strings.Contains(b.String(), "unstable upstream:") {
		t.Errorf("a report without unstable cases names some:\n%s", b.String())
	}
}
