package sandbox_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
)

// landlockRule is the Landlock backend's runner-failure rule.
var landlockRule = sandbox.RunnerFailureRule{AllowedExitCodes: []int{125},
	FatalSignatures: []string{"landlock-run: "}, InformationalLines: []string{sandbox.LandlockPartialNotice}}

var lineSplit = regexp.MustCompile(`\r?\n`)

// oracle is an independent reading of the rule ClassifyRunnerFailure's doc
// states, for a single rule.
func oracle(exit int, signaled bool, stderr string, r sandbox.RunnerFailureRule) (string, bool) {
	if signaled || exit == 0 {
		return "", false
	}
	if r.AllowedExitCodes != nil && !slices.Contains(r.AllowedExitCodes, exit) {
		return "", false
	}
	for _, line := range lineSplit.Split(stderr, -1) {
		info := false
		for _, i := range r.InformationalLines {
			//lint:ignore SA6005 ToLower on both sides, as the rule states it (and JavaScript's toLowerCase does), not EqualFold's case folding ("ſ" folds to "s")
			if strings.ToLower(line) == strings.ToLower(i) {
				info = true
			}
		}
		if info {
			continue
		}
		for _, f := range r.FatalSignatures {
			if strings.TrimSpace(f) != "" && strings.Contains(strings.ToLower(line), strings.ToLower(f)) {
				return line, true
			}
		}
	}
	return "", false
}

// FuzzClassifyRunnerFailure checks sandbox.ClassifyRunnerFailure against the
// rule's properties: exit 0 and signals never match; a detail is always one
// of the stderr lines, never the informational notice, and carries a fatal
// signature; with the Landlock rule only exit 125 matches; and the verdict
// equals an independent oracle, for the Landlock rule alone and for a fuzzed
// second rule after it.
func FuzzClassifyRunnerFailure(f *testing.F) {
	f.Add(125, false, "landlock-run: partial enforcement (older Landlock ABI)\nlandlock-run: exec failed: No such file or directory\n", "bwrap: ", "", 0)
	f.Add(1, false, "landlock-run: partial enforcement (older Landlock ABI)\n", "landlock-run: ", "x", 1)
	f.Add(125, true, "landlock-run: landlock ruleset error: x\n", "", "", 0)
	f.Add(0, false, "bwrap: Can't mount proc\n", "bwrap: ", "", -1)
	f.Fuzz(func(t *testing.T, exit int, signaled bool, stderr, fatal, info string, gate int) {
		detail, ok := sandbox.ClassifyRunnerFailure(exit, signaled, stderr, []sandbox.RunnerFailureRule{landlockRule})
		if (signaled || exit == 0) && ok {
			t.Fatalf("exit %d signaled %v matched %q", exit, signaled, detail)
		}
		if ok {
			if exit != 125 {
				t.Fatalf("Landlock rule matched at exit %d", exit)
			}
			if !slices.Contains(lineSplit.Split(stderr, -1), detail) {
				t.Fatalf("detail %q is not a stderr line of %q", detail, stderr)
			}
			if strings.EqualFold(detail, sandbox.LandlockPartialNotice) {
				t.Fatalf("detail is the informational notice")
			}
			if !strings.Contains(strings.ToLower(detail), "landlock-run: ") {
				t.Fatalf("detail %q has no fatal signature", detail)
			}
		}
		wantD, wantOK := oracle(exit, signaled, stderr, landlockRule)
		if ok != wantOK || detail != wantD {
			t.Fatalf("Landlock rule: got (%q, %v), oracle (%q, %v)", detail, ok, wantD, wantOK)
		}

		second := sandbox.RunnerFailureRule{FatalSignatures: []string{fatal}, InformationalLines: []string{info}}
		if gate != 0 {
			second.AllowedExitCodes = []int{gate}
		}
		detail2, ok2 := sandbox.ClassifyRunnerFailure(exit, signaled, stderr, []sandbox.RunnerFailureRule{landlockRule, second})
		wantD, wantOK = oracle(exit, signaled, stderr, landlockRule)
		if !wantOK {
			wantD, wantOK = oracle(exit, signaled, stderr, second)
		}
		if ok2 != wantOK || detail2 != wantD {
			t.Fatalf("two rules: got (%q, %v), oracle (%q, %v)", detail2, ok2, wantD, wantOK)
		}
		if ok2 && !slices.Contains(lineSplit.Split(stderr, -1), detail2) {
			t.Fatalf("detail %q is not a stderr line", detail2)
		}
	})
}
