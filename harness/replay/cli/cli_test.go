package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

func TestMainExitStatus(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		status int
		stdout string // substring
		stderr string // substring
	}{
		{name: "all matching recordings exit 0", args: []string{"-run", "^fs-read$", "../../../transcripts"}, status: 0, stdout: "ok: 1 recordings: 1 match"},
		{name: "a mismatch exits 1", args: []string{"../../../testdata/replay/flagged/changed-seed"}, status: 1, stdout: "FAIL: 1 recordings: 0 match, 1 mismatch"},
		{name: "a bad recording exits 1", args: []string{"../../../testdata/replay/bad/unknown-event-type"}, status: 1, stdout: "unknown-event-type/session.jsonl:8: field type"},
		{name: "no directory is a usage error", args: nil, status: 2, stderr: "no DIR given"},
		{name: "a bad shard is a usage error", args: []string{"-shard", "0/2", "../../../transcripts"}, status: 2, stderr: "want i/n"},
		{name: "a bad pattern is a usage error", args: []string{"-run", "(", "../../../transcripts"}, status: 2, stderr: "-run: error parsing regexp"},
		{name: "a missing directory is a usage error", args: []string{"../../../no-such-dir"}, status: 2, stderr: "no-such-dir"},
		{name: "-h documents and exits 0", args: []string{"-h"}, status: 0, stdout: "usage: dsh-replay [flags] DIR..."},
		{name: "an unknown flag is a usage error", args: []string{"-bogus", "../../../transcripts"}, status: 2, stderr: "dsh-replay: flag provided but not defined: -bogus; run dsh-replay -h for usage"},
		{name: "a negative timeout is a usage error", args: []string{"-timeout", "-1s", "../../../transcripts"}, status: 2, stderr: "-timeout -1s: want a positive duration"},
		{name: "a zero timeout is a usage error", args: []string{"-timeout", "0", "../../../transcripts"}, status: 2, stderr: "-timeout 0s: want a positive duration"},
		{name: "a flag after DIR is a usage error, not a DIR", args: []string{"../../../transcripts", "-v"}, status: 2, stderr: "flag -v after the arguments"},
		{name: "a zero bound of /tmp is a usage error", args: []string{"-tmp-size", "0", "../../../transcripts"}, status: 2, stderr: "-tmp-size 0: want a positive bound"},
		{name: "a negative seed bound is a usage error", args: []string{"-seed-max-files", "-1", "../../../transcripts"}, status: 2, stderr: "-seed-max-files -1: want a positive bound"},
		{name: "a size that is not one is a usage error", args: []string{"-seed-max-bytes", "1T", "../../../transcripts"}, status: 2, stderr: `invalid value "1T" for flag -seed-max-bytes: want bytes`},
		{name: "a seed past a bound is an error naming the file", args: []string{"-seed-max-file-bytes", "10", "../../../transcripts/hook-cc-pretool-deny"}, status: 1,
			stdout: "hook-cc-pretool-deny/workspace/hooks.json: 227 bytes, more than the bound of one file, 10 bytes (dsh-replay -seed-max-file-bytes)"},
		{name: "-refresh with -junit is a usage error (nothing is refreshed)", args: []string{"-refresh", "-junit", "LOGS.xml", "COPY/fs-read"}, status: 2,
			stderr: "-refresh writes recordings and reports per recording: it takes no -json, -html, -junit or -update"},
		{name: "-logs with two recordings of one name is a usage error", args: []string{"-logs", "LOGS", "../../../transcripts/fs-read", "COPY/fs-read"}, status: 2,
			stderr: "recordings ../../../transcripts/fs-read and COPY/fs-read would both keep their log as fs-read.session.jsonl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			if err := recording.CopyTree("../../../transcripts/fs-read", filepath.Join(tmp, "copy", "fs-read")); err != nil {
				t.Fatal(err)
			}
			r := strings.NewReplacer("LOGS", filepath.Join(tmp, "logs"), "COPY", filepath.Join(tmp, "copy"))
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = r.Replace(a)
			}
			var out, errb bytes.Buffer
			if got := Main(args, &out, &errb); got != tc.status {
				t.Fatalf("status %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tc.status, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), r.Replace(tc.stderr)) {
				t.Errorf("stdout %q lacks %q or stderr %q lacks %q", out.String(), tc.stdout, errb.String(), r.Replace(tc.stderr))
			}
			if tc.status == 2 && (out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 || !strings.HasSuffix(errb.String(), "; run dsh-replay -h for usage\n")) {
				t.Errorf("a usage error is one line pointing at -h on stderr and nothing on stdout: stdout %q, stderr %q", out.String(), errb.String())
			}
			if _, err := os.Stat(filepath.Join(tmp, "logs")); err == nil {
				t.Error("-logs directory made although nothing was replayed")
			}
		})
	}
}

// TestNothingMatched: a -run or -shard that selects no recording is one
// line on stderr naming the selection, nothing on stdout, exit 1 (not a
// usage error: the command line is well formed), and nothing is replayed;
// the same rule as dsh-sim -run.
func TestNothingMatched(t *testing.T) {
	all, err := replay.Discover([]string{"../../../transcripts"})
	if err != nil {
		t.Fatal(err)
	}
	n := fmt.Sprint(len(all))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-run", "^zzz$", "../../../transcripts"}, `no recording matches -run "^zzz$" (of ` + n + ` found)`},
		{[]string{"-shard", "2/2", "../../../transcripts/fs-read"}, "no recording matches -shard 2/2 (of 1 found)"},
		{[]string{"-run", "^fs-read$", "-shard", "2/2", "../../../transcripts"}, `no recording matches -run "^fs-read$" -shard 2/2 (of ` + n + ` found)`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args[:len(tc.args)-1], " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			status := Main(tc.args, &out, &errb)
			if status != 1 || out.Len() != 0 || errb.String() != "dsh-replay: "+tc.want+"\n" {
				t.Errorf("status %d, stdout %q, stderr %q; want 1, nothing, %q", status, out.String(), errb.String(), "dsh-replay: "+tc.want)
			}
		})
	}
}

// TestOutputPathsFirst: an -html or -junit FILE or a -logs DIR that cannot be made is
// a usage error before anything is replayed (no report, no progress), and
// -logs never makes the directory's parents.
func TestOutputPathsFirst(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "missing")
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"-html in a missing directory", []string{"-html", filepath.Join(missing, "r.html")}, "-html " + filepath.Join(missing, "r.html") + ": its parent " + missing + " is not a directory (dsh-replay makes no directory for it)"},
		{"-html a directory", []string{"-html", tmp}, "-html " + tmp + ": is a directory"},
		{"-junit in a missing directory", []string{"-junit", filepath.Join(missing, "r.xml")}, "-junit " + filepath.Join(missing, "r.xml") + ": its parent " + missing + " is not a directory (dsh-replay makes no directory for it)"},
		{"-junit a directory", []string{"-junit", tmp}, "-junit " + tmp + ": is a directory"},
		{"-logs in a missing directory", []string{"-logs", filepath.Join(missing, "logs")}, "-logs " + filepath.Join(missing, "logs") + ": its parent " + missing + " is not a directory (dsh-replay makes the directory, not its parents)"},
		{"-logs a file", []string{"-logs", file}, "-logs " + file + ": not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			status := Main(append(tc.args, "../../../transcripts/fs-read"), &out, &errb)
			if status != 2 || out.Len() != 0 || errb.String() != "dsh-replay: "+tc.want+"; run dsh-replay -h for usage\n" {
				t.Errorf("status %d, stdout %q, stderr %q; want 2 and the usage line %q", status, out.String(), errb.String(), tc.want)
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("%s was made", missing)
			}
		})
	}
}

// TestLogsMakesItsDirectory: a missing -logs DIR whose parent exists is made
// (that one directory) and holds the replayed log.
func TestLogsMakesItsDirectory(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	var out, errb bytes.Buffer
	if status := Main([]string{"-logs", logs, "-run", "^fs-read$", "../../../transcripts"}, &out, &errb); status != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", status, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(logs, "fs-read.session.jsonl")); err != nil {
		t.Error(err)
	}
}

func TestJSONReport(t *testing.T) {
	var out, errb bytes.Buffer
	status := Main([]string{"-json", "-parallel", "1", "../../../testdata/replay/flagged/changed-seed", "../../../transcripts/fs-write"}, &out, &errb)
	if status != 1 {
		t.Fatalf("status %d\n%s", status, errb.String())
	}
	var rep struct {
		OK         bool
		Summary    struct{ Total, Match, Mismatch, Error int }
		Recordings []struct {
			Name, Verdict string
			Comparison    struct {
				Matched, Total int
				Pairs          []struct {
					Match bool
					Diffs []struct{ Path string }
				}
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	if rep.OK || rep.Summary.Total != 2 || rep.Summary.Match != 1 || rep.Summary.Mismatch != 1 {
		t.Fatalf("summary %+v ok %v", rep.Summary, rep.OK)
	}
	r := rep.Recordings[0]
	if r.Name != "changed-seed" || r.Verdict != "mismatch" || r.Comparison.Matched != 7 || r.Comparison.Total != 8 {
		t.Errorf("first recording %+v", r)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr is not a terminal, yet it shows %q", errb.String())
	}
}

// TestSettingsKeysAreDocumented: docs/replay.md, the manual dsh-replay -h
// points at, lists every key of dshsim.replay.json with the upstream
// scenario it mirrors.
func TestSettingsKeysAreDocumented(t *testing.T) {
	page := replayPage(t)
	for _, k := range recording.SettingKeys {
		row := fmt.Sprintf("| `%s` | %s | %s | %s |", k.Name, k.Value, k.Mirrors, k.Meaning)
		if !strings.Contains(page, row+"\n") {
			t.Errorf("docs/replay.md lacks the row\n%s", row)
		}
	}
}

// TestStdoutLineKindsAreDocumented: docs/replay.md lists every kind of
// stdout line with whether it is compared and why.
func TestStdoutLineKindsAreDocumented(t *testing.T) {
	page := replayPage(t)
	for _, k := range acpwire.Kinds {
		verdict := "not compared"
		if k.Compared {
			verdict = "compared"
		}
		if row := fmt.Sprintf("| %s | %s | %s |", k.Kind, verdict, k.Why); !strings.Contains(page, row+"\n") {
			t.Errorf("docs/replay.md lacks the row\n%s", row)
		}
	}
}

// TestHelpFitsAScreen: dsh-replay -h, flags included, is at most 60 lines
// of at most 80 columns (tabs at 8) and points at its manual,
// docs/replay.md, which has what the help leaves out.
func TestHelpFitsAScreen(t *testing.T) {
	var out, errb bytes.Buffer
	if status := Main([]string{"-h"}, &out, &errb); status != 0 || errb.Len() != 0 {
		t.Fatalf("-h exited %d, stderr %q", status, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) > 60 {
		t.Errorf("dsh-replay -h is %d lines, more than a screen (60): move the detail to docs/replay.md", len(lines))
	}
	for i, l := range lines {
		if w := columns(l); w > 80 {
			t.Errorf("line %d is %d columns wide (at most 80): %q", i+1, w, l)
		}
	}
	if !strings.Contains(out.String(), "docs/replay.md") {
		t.Error("dsh-replay -h does not point at its manual, docs/replay.md")
	}
	flags := 0
	command(&options{}).Flags.VisitAll(func(f *flag.Flag) {
		flags++
		if !strings.Contains(out.String(), "\n  -"+f.Name) {
			t.Errorf("dsh-replay -h does not list -%s", f.Name)
		}
	})
	if flags < 19 {
		t.Errorf("found %d flags; the check above lists too few", flags)
	}
}

// columns is the width of a line on a terminal, tabs at every 8 columns.
func columns(line string) int {
	w := 0
	for _, r := range line {
		if r == '\t' {
			w += 8 - w%8
		} else {
			w++
		}
	}
	return w
}

// replayPage returns docs/replay.md, the manual of dsh-replay.
func replayPage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../../docs/replay.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestByteSize: a byte count with an optional K, M or G (powers of 1024);
// anything else, or an overflow, is refused.
func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1048576", 1 << 20, true}, {"4K", 4 << 10, true}, {"512M", 512 << 20, true}, {"2G", 2 << 30, true},
		{"8589934591G", 8589934591 << 30, true}, {"8589934592G", 0, false},
		{"", 0, false}, {"K", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1T", 0, false}, {"1k", 0, false}, {"1.5G", 0, false}, {"1 G", 0, false},
	} {
		var b byteSize
		err := b.Set(tc.in)
		if (err == nil) != tc.ok || (tc.ok && int64(b) != tc.want) {
			t.Errorf("Set(%q) = %d, %v; want %d, ok %v", tc.in, b, err, tc.want, tc.ok)
		}
	}
	for n, want := range map[int64]string{0: "0", 1000: "1000", 1536: "1536", 4 << 10: "4K", 512 << 20: "512M", 1 << 30: "1G", 3 << 30: "3G"} {
		if got := (*byteSize)(&n).String(); got != want {
			t.Errorf("String(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestJUnitReport: -junit FILE writes a report that a JUnit parser
// (github.com/joshdk/go-junit) reads back as the run the JSON report of the
// same run describes: one test case per recording in order, passed, failed
// with the first difference as the message, or an error, each with a time.
func TestJUnitReport(t *testing.T) {
	file := filepath.Join(t.TempDir(), "replay.xml")
	var out, errb bytes.Buffer
	status := Main([]string{"-json", "-junit", file, "-parallel", "2", "../../../testdata/replay/flagged/changed-seed",
		"../../../transcripts/fs-write", "../../../testdata/replay/bad/unknown-event-type"}, &out, &errb)
	if status != 1 {
		t.Fatalf("status %d\n%s", status, errb.String())
	}
	var rep struct{ Recordings []*replay.Result }
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	suites, err := junit.IngestFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != 1 || len(suites[0].Tests) != len(rep.Recordings) || len(rep.Recordings) != 3 {
		t.Fatalf("want one suite of 3 test cases, got %d suites %+v", len(suites), suites)
	}
	status2 := map[string]junit.Status{replay.Match: junit.StatusPassed, replay.Mismatch: junit.StatusFailed, replay.Failed: junit.StatusError}
	seen := map[junit.Status]bool{}
	for i, r := range rep.Recordings {
		tc := suites[0].Tests[i]
		seen[tc.Status] = true
		if tc.Name != r.Name || tc.Status != status2[r.Verdict] || tc.Message != r.FirstDifference() || tc.Duration <= 0 {
			t.Errorf("test case %d: %s %s %q %v; the replay: %s %s %q", i, tc.Name, tc.Status, tc.Message, tc.Duration, r.Name, r.Verdict, r.FirstDifference())
		}
	}
	if len(seen) != 3 {
		t.Errorf("the run must pass, fail and err once: %v", seen)
	}
	if !strings.Contains(suites[0].Tests[0].Message, "turn ") || !strings.Contains(suites[0].Tests[2].Message, "session.jsonl:8: field type") {
		t.Errorf("messages %q, %q: want the first differing event and the error naming file and line", suites[0].Tests[0].Message, suites[0].Tests[2].Message)
	}
}
