package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testName is a test function's name in backquotes, as docs/threat-model.md
// names the test beside each claim.
var testName = regexp.MustCompile("`(Test[A-Z][A-Za-z0-9_]*)`")

// missingTests returns the names of tests the page cites that no _test.go
// source declares (sources: every _test.go file's text, concatenated).
// Pure.
func missingTests(page, sources string) []string {
	var missing []string
	for _, m := range testName.FindAllStringSubmatch(page, -1) {
		if !strings.Contains(sources, "func "+m[1]+"(") {
			missing = append(missing, m[1])
		}
	}
	return missing
}

// TestMissingTests: a cited test declared somewhere passes, a misspelt one
// (or one declared only as a prefix of another) is named.
func TestMissingTests(t *testing.T) {
	sources := "func TestAB(t *testing.T) {}\nfunc TestCDE(t *testing.T) {}\n"
	got := missingTests("| a | `TestAB` |\n| b | `TestCD`, `TestXY` |\n", sources)
	if strings.Join(got, ",") != "TestCD,TestXY" {
		t.Errorf("missingTests = %q, want TestCD and TestXY", got)
	}
}

// TestThreatModelNamesRealTests: every test docs/threat-model.md holds a
// claim with is a test of the tree, and the page names at least 40.
func TestThreatModelNamesRealTests(t *testing.T) {
	root := Root(t)
	page, err := os.ReadFile(filepath.Join(root, "docs", "threat-model.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sources strings.Builder
	for _, rel := range walkRepo(t, root) {
		if strings.HasSuffix(rel, "_test.go") {
			b, err := os.ReadFile(filepath.Join(root, rel))
			if err != nil {
				t.Fatal(err)
			}
			sources.Write(b)
		}
	}
	if n := len(testName.FindAllString(string(page), -1)); n < 40 {
		t.Errorf("docs/threat-model.md names %d tests; want each claim beside its test (at least 40)", n)
	}
	for _, name := range missingTests(string(page), sources.String()) {
		t.Errorf("docs/threat-model.md names %s, which no _test.go declares", name)
	}
}
