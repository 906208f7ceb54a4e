package jsregex

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/dshsim/dshsim/harness"
)

// Patterns JavaScript accepts that this package refuses (UnsupportedError).
var wantUnsupported = map[string]bool{
	`(?=a)`: true, `(?<=a)b`: true, `(a)\1`: true, `(?<n>a)\k<n>`: true, `(?=a)*`: true,
	`a{1001}`: true, `a{0,1001}`: true, `(?<a>)(?<b>)\k<a>`: true,
	`(((((((((((a)))))))))))\11`: true, `\1(a)`: true,
}

// Patterns whose validity depends on the JavaScript engine's version (node 20
// rejects them, newer engines accept them): refused either way.
var versionDependent = map[string]bool{
	`(?<n>a)(?<n>b)`: true, `(?<n>a)|(?<n>b)`: true, `(?i:a)`: true, `(?-i:a)`: true,
}

type truthRow struct {
	P   string `json:"p"`
	Err string `json:"err,omitempty"`
	M   string `json:"m,omitempty"`
}

func loadCases(t *testing.T) (patterns, subjects []string, rows []truthRow) {
	t.Helper()
	var cases struct{ Patterns, Subjects []string }
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	var truth struct{ Rows []truthRow }
	b, err = os.ReadFile("testdata/node-truth.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	if len(truth.Rows) != len(cases.Patterns) {
		t.Fatalf("node-truth.json has %d rows for %d patterns: regenerate it (DSHSIM_UPDATE=1 with node on PATH)", len(truth.Rows), len(cases.Patterns))
	}
	return cases.Patterns, cases.Subjects, truth.Rows
}

// TestAgainstJavaScript checks every pattern of testdata/cases.json against
// what node said (testdata/node-truth.json): the same error-or-not verdict,
// and the same test() result on every subject.
func TestAgainstJavaScript(t *testing.T) {
	_, subjects, rows := loadCases(t)
	for _, row := range rows {
		re, err := Compile(row.P)
		var se *SyntaxError
		var ue *UnsupportedError
		switch {
		case versionDependent[row.P]:
			if !errors.As(err, &ue) {
				t.Errorf("%q: version-dependent in JavaScript: want an UnsupportedError, got %v", row.P, err)
			}
		case row.Err != "":
			if !errors.As(err, &se) {
				t.Errorf("%q: JavaScript throws %q; want a SyntaxError, got %v", row.P, row.Err, err)
			}
		case wantUnsupported[row.P]:
			if !errors.As(err, &ue) {
				t.Errorf("%q: want an UnsupportedError, got %v", row.P, err)
			}
		case err != nil:
			t.Errorf("%q: JavaScript accepts it; Compile: %v", row.P, err)
		default:
			for i, s := range subjects {
				if s == "\uFFFD" {
					continue // a lone surrogate in JSON: Go strings cannot hold it
				}
				if got, want := re.Test(s), row.M[i] == '1'; got != want {
					t.Errorf("/%s/.test(%q) = %v in JavaScript, %v here (Go program %s)", row.P, s, want, got, re.GoProgram())
				}
			}
		}
	}
}

// TestTruthFileIsJavaScript re-derives node-truth.json with node, so the
// pinned expectations are JavaScript's and not hand-written.
func TestTruthFileIsJavaScript(t *testing.T) {
	var fresh struct{ Rows []truthRow }
	if !harness.NodeTruth(t, "testdata", &fresh) {
		return
	}
	_, _, rows := loadCases(t)
	for i, r := range fresh.Rows {
		if versionDependent[r.P] {
			continue
		}
		if r != rows[i] {
			t.Errorf("pattern %q: node says %+v, node-truth.json says %+v (DSHSIM_UPDATE=1 rewrites it)", r.P, r, rows[i])
		}
	}
}

func TestSyntaxErrorsSayWhere(t *testing.T) {
	tests := []struct {
		pattern string
		offset  int
		problem string
	}{
		{"(", 1, "unterminated group"},
		{"[", 1, "unterminated character class"},
		{"*bash", 0, "nothing to repeat"},
		{"**", 0, "nothing to repeat"},
		{"a{2,1}", 1, "numbers out of order in {} quantifier"},
		{"a)", 1, "unmatched ')'"},
		{"(?i)a", 1, "invalid group"},
		{`a\`, 2, `\ at end of pattern`},
		{"[z-a]", 4, "range out of order in character class"},
		{"^*", 1, "nothing to repeat"},
		{"(?<=a)+", 6, "nothing to repeat"},
		{"(?<1a>x)", 3, "invalid capture group name"},
		{`(?<a>x)\k<b>`, 12, "invalid named capture referenced"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.pattern)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: want a SyntaxError, got %v", tt.pattern, err)
			continue
		}
		if se.Offset != tt.offset || se.Problem != tt.problem {
			t.Errorf("%q: got %q at %d, want %q at %d", tt.pattern, se.Problem, se.Offset, tt.problem, tt.offset)
		}
	}
}

// A pattern that is both invalid and uses an unsupported construct is
// reported as invalid: that is what upstream would say.
func TestInvalidBeatsUnsupported(t *testing.T) {
	_, err := Compile("(?=a)[")
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a SyntaxError", err)
	}
}

func TestUnsupportedSaysWhat(t *testing.T) {
	_, err := Compile("x(?<!a)b")
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Offset != 1 || !bytes.Contains([]byte(ue.Feature), []byte("lookbehind")) {
		t.Fatalf("got %#v", err)
	}
	if want := "regular expression /x(?<!a)b/ uses a lookbehind assertion ((?<!…) (at offset 1), which Go's regexp cannot run: refused rather than matched differently"; err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

// Surrogates: a flagless RegExp sees UTF-16 code units.
func TestCodeUnits(t *testing.T) {
	tests := []struct {
		pattern, subject string
		want             bool
	}{
		{`^.$`, "😀", false},
		{`^..$`, "😀", true},
		{`^[😀]$`, "😀", false}, // the class holds two units, each matches one
		{`^[😀]{2}$`, "😀", true},
		{`^\uD83D\uDE00$`, "😀", true},
		{`^[\uD800-\uDBFF][\uDC00-\uDFFF]$`, "😀", true},
		{`^[^\uD800-\uDFFF]+$`, "😀", false},
		{`^\W\W$`, "😀", true},
		{`^\u{3}$`, "uuu", true}, // no \u{…} without the u flag: "u" three times
		{`^é$`, "é", true},
		{`^\xE9$`, "é", true},
	}
	for _, tt := range tests {
		re, err := Compile(tt.pattern)
		if err != nil {
			t.Errorf("%q: %v", tt.pattern, err)
			continue
		}
		if got := re.Test(tt.subject); got != tt.want {
			t.Errorf("/%s/.test(%q) = %v, want %v (%s)", tt.pattern, tt.subject, got, tt.want, re.GoProgram())
		}
	}
}

func FuzzCompile(f *testing.F) {
	for _, p := range []string{"bash", "(a|b)*", `[\d-z]`, `\k<a>(?<a>)`, "a{1,", `\c`, "(?<é>x)", `[\uD800-\uDFFF]`} {
		f.Add(p, "bash")
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		re, err := Compile(pattern) // must not panic
		if err == nil {
			re.Test(s)
		}
	})
}
