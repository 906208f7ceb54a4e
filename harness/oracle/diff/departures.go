package diff

import (
	"regexp"
	"strings"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/projection"
)

// A NamedDeparture is a difference from upstream that is deliberate and named
// in docs/: a result whose first difference reads Text is that departure,
// not a mismatch.
type NamedDeparture struct {
	// Name is the departure's name; Doc where docs/ names it.
	Name, Doc string
	// Text is a part of the result's Detail that only this departure shows;
	// Match, when set, decides instead.
	Text  string
	Match func(r *replay.Result) bool
}

// Departures are the named departures the generator can meet (it avoids
// generating them, but a shrunk or mutated script may still reach one).
var Departures = []NamedDeparture{
	{
		Name: "escalation to the current mode",
		Doc:  "docs/replay.md#upstream-as-an-oracle",
		Text: `is not strictly wider than this call's current`,
	},
	{
		Name:  "run_code's syntax errors are esbuild's words",
		Doc:   "docs/stack.md#departures-from-the-recorded-version",
		Match: esbuildSyntaxError,
	},
	{
		Name:  "rg's own error text is Debian's rg 13's (upstream's rg 15 prefixes it with \"rg: \" and words some errors otherwise)",
		Doc:   "docs/stack.md#tools-beyond-the-safety-stack",
		Match: rgErrorPrefix,
	},
	{
		Name:  "a call's processes end with its root: what they would print later is not in its output",
		Doc:   "docs/oracle.md#named-departures",
		Match: leftoverOutput,
	},
	{
		Name:  "a background job whose spawn fails asynchronously: when the host learns of it",
		Doc:   "docs/oracle.md#named-departures",
		Match: spawnFailureNotice,
	},
}

// onlyText returns the expected and our text when a result's first
// difference is one event present on both sides that differs in its text
// alone.
func onlyText(r *replay.Result) (expected, got string, ok bool) {
	p := r.Comparison.First()
	if p == nil || p.Expected == nil || p.Got == nil || len(p.Diffs) != 1 || p.Diffs[0].Path != "text" {
		return "", "", false
	}
	expected, _ = p.Diffs[0].Expected.(string)
	got, _ = p.Diffs[0].Got.(string)
	return expected, got, true
}

// esbuildWords are the openings of esbuild's syntax errors.
var esbuildWords = regexp.MustCompile(`^Error: code run failed \(exception\): (Unexpected|Expected|Unterminated|Invalid|Syntax error)`)

// esbuildSyntaxError: the first difference is a run_code result whose
// failure upstream words as Node's type stripper (SWC) and we as esbuild,
// each on one line.
func esbuildSyntaxError(r *replay.Result) bool {
	e, g, ok := onlyText(r)
	return ok && strings.HasPrefix(e, "Error: code run failed (exception): ") && !strings.Contains(e, "\n") &&
		esbuildWords.MatchString(g) && !strings.Contains(g, "\n")
}

// rgErrorPrefix: the first difference is one text, a search failure that
// quotes rg's stderr, the same on both sides up to the quote, which
// upstream's rg 15 starts with "rg: " (its words differ from rg 13's too:
// "IO error for operation on", a pattern shown wrapped in a group).
func rgErrorPrefix(r *replay.Result) bool {
	e, g, ok := onlyText(r)
	quote := strings.Index(e, "rg: ")
	if !ok || quote < 0 || !strings.HasPrefix(g, e[:quote]) {
		return false
	}
	opening := e[:quote]
	return strings.HasPrefix(opening, "Error: ") && (strings.Contains(opening, " search failed (exit ") || strings.HasSuffix(opening, " rejected by ripgrep: "))
}

// leftoverOutput: the first difference is one text alone, ours upstream's
// with lines missing (its lines, in order, a part of upstream's): the
// output a call's processes print after its root exits, which upstream
// waits for (they hold its pipes) and our executor's subreaper ends with
// the call.
func leftoverOutput(r *replay.Result) bool {
	e, g, ok := onlyText(r)
	if !ok {
		return false
	}
	want, got := strings.Split(e, "\n"), strings.Split(g, "\n")
	if len(got) >= len(want) {
		return false
	}
	i := 0
	for _, l := range want {
		if i < len(got) && l == got[i] {
			i++
		}
	}
	return i == len(got)
}

// spawnFailureNotice: our first difference is a completion notice of a job
// killed before exit where upstream has none yet. The recordings' version
// learns of an asynchronous spawn failure when the step that started the
// job has ended (its notice comes even when a wait reads the job next);
// the oracle's rc.8 learns of it only at the host's next yield (a wait
// reads it and no notice comes, or the notice comes after the turn).
func spawnFailureNotice(r *replay.Result) bool {
	p := r.Comparison.First()
	if p == nil || p.Got == nil || p.Got.Kind != projection.KindNotice || p.Expected != nil && p.Expected.Kind == projection.KindNotice {
		return false
	}
	text, _ := p.Got.Fields["text"].(string)
	return strings.Contains(text, "finished [status: killed, killed before exit]")
}

// departureOf names the departure a mismatch is ("" when none).
func departureOf(r *replay.Result) string {
	detail := r.Detail()
	for _, d := range Departures {
		if d.Match != nil && d.Match(r) || d.Match == nil && strings.Contains(detail, d.Text) {
			return d.Name
		}
	}
	return ""
}
