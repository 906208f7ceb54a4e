package diff

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/projection"
)

// TestDdmin: the result is the 1-minimal subset the test needs, from any
// position, and nothing when the test holds without any unit.
func TestDdmin(t *testing.T) {
	units := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, tc := range []struct {
		need []int
		want []int
	}{
		{[]int{3, 7}, []int{3, 7}},
		{[]int{0}, []int{0}},
		{[]int{9}, []int{9}},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8}, []int{1, 2, 3, 4, 5, 6, 7, 8}},
		{nil, nil},
	} {
		calls := 0
		got, err := ddmin(units, func(sub []int) (bool, error) {
			calls++
			for _, n := range tc.need {
				if !slices.Contains(sub, n) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("need %v: ddmin = %v, %v (want %v)", tc.need, got, err, tc.want)
		}
		if calls > 60 {
			t.Errorf("need %v: %d tests for 10 units", tc.need, calls)
		}
	}
}

// TestShrink: a difference that needs one call and one of its arguments is
// shrunk to that call with that argument (the text step stays), the other
// files and answers go.
func TestShrink(t *testing.T) {
	s, err := oracle.ParseScript([]byte(`{"prompts":["p"],"workspace":{"a.txt":"a","b.txt":"b"},
		"permissionAnswers":[{"kind":"allow_once"},{"kind":"reject_once"}],
		"turns":[[{"calls":[["bash",{"command":"echo 1","description":"d"}]]},
		{"calls":[["read",{"file_path":"a.txt","offset":2,"limit":3}],["read",{"file_path":"b.txt"}]]},
		{"calls":[["bash",{"command":"echo 3","description":"d","timeoutMs":0.5}]]},
		{"text":"DONE"}]]}`))
	if err != nil {
		t.Fatal(err)
	}
	// the "difference": a bash call with a timeoutMs and a.txt in the workspace
	test := func(_ context.Context, c *oracle.Script) (bool, error) {
		_, hasA := c.Workspace["a.txt"]
		for _, call := range allCalls(c) {
			var m map[string]any
			json.Unmarshal(call.Args, &m)
			if call.Name == "bash" && m["timeoutMs"] != nil && hasA {
				return true, nil
			}
		}
		return false, nil
	}
	min, tests, err := Shrink(context.Background(), s, test)
	if err != nil {
		t.Fatal(err)
	}
	got := string(min.JSON())
	for _, want := range []string{`"timeoutMs": 0.5`, `"a.txt": "a"`, `"text": "DONE"`} {
		if !strings.Contains(got, want) {
			t.Errorf("minimal script lacks %s:\n%s", want, got)
		}
	}
	for _, gone := range []string{"echo 1", "echo 3", "description", "b.txt", "read", "allow_once"} {
		if strings.Contains(got, gone) {
			t.Errorf("minimal script keeps %s:\n%s", gone, got)
		}
	}
	if min.Calls() != 1 || tests == 0 {
		t.Errorf("%d calls after %d tests", min.Calls(), tests)
	}
	if s.Calls() != 4 {
		t.Error("Shrink changed the script it was given")
	}
}

// TestSignature: the first difference's kinds and field paths, not its
// values; a flag or an error without its numbers.
func TestSignature(t *testing.T) {
	item := func(kind string) *projection.Item { return &projection.Item{Kind: kind} }
	mismatch := func(p projection.Pair) *replay.Result {
		return &replay.Result{Verdict: replay.Mismatch, Comparison: projection.Comparison{Pairs: []projection.Pair{{Match: true}, p}}}
	}
	for _, tc := range []struct {
		r    *replay.Result
		want string
	}{
		{mismatch(projection.Pair{Expected: item("tool/result"), Got: item("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: "a", Got: "b"}, {Path: "meta.lines[0]"}}}), "tool/result/tool/result: text,meta.lines[0]"},
		{mismatch(projection.Pair{Expected: item("tool/call"), Diffs: []projection.FieldDiff{{Path: "(item)"}}}), "tool/call/: (item)"},
		{&replay.Result{Verdict: replay.Mismatch, Flags: []string{"unconsumed replies: 2 of 7 model replies were never requested"}}, "flag: unconsumed replies: N of N model replies were never requested"},
		{&replay.Result{Verdict: replay.Failed, Error: "stack for x: line 12\nmore"}, "error: stack for x: line N"},
	} {
		if got := Signature(tc.r); got != tc.want {
			t.Errorf("Signature = %q, want %q", got, tc.want)
		}
	}
}

// TestDepartureOf: a first difference that is a notice of a job killed
// before exit, where upstream has no notice, is the spawn-failure
// departure; any other extra notice, or the same notice where upstream has
// one too, is not. A search failure that differs only by rg 15's "rg: "
// prefixes is the rg departure; any other difference beside it is not. A
// result of ours that is upstream's with lines missing (in order) is the
// leftover-process departure; a line that differs, one more of ours or
// lines out of order are not.
func TestDepartureOf(t *testing.T) {
	notice := func(text string) *projection.Item {
		return &projection.Item{Kind: projection.KindNotice, Fields: map[string]any{"text": text}}
	}
	killed := notice("background job bash-1 (bash: true) finished [status: killed, killed before exit]. Read its output with job_output.")
	completed := notice("background job bash-1 (bash: true) finished [status: completed, exit code: 0]. Read its output with job_output.")
	call := &projection.Item{Kind: projection.KindCall}
	item2 := func(kind string) *projection.Item { return &projection.Item{Kind: kind} }
	result := func(p projection.Pair) *replay.Result {
		return &replay.Result{Verdict: replay.Mismatch, Comparison: projection.Comparison{Pairs: []projection.Pair{p}}}
	}
	text := func(expected, got string) *replay.Result {
		return result(projection.Pair{Expected: item2("tool/result"), Got: item2("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: expected, Got: got}}})
	}
	for _, tc := range []struct {
		name string
		r    *replay.Result
		want string
	}{
		{"an early notice of a failed spawn", result(projection.Pair{Expected: call, Got: killed}), "a background job whose spawn fails asynchronously: when the host learns of it"},
		{"one at the end", result(projection.Pair{Got: killed}), "a background job whose spawn fails asynchronously: when the host learns of it"},
		{"an early notice of a job that ran", result(projection.Pair{Expected: call, Got: completed}), ""},
		{"notices on both sides", result(projection.Pair{Expected: killed, Got: killed}), ""},
		{"a syntax error in esbuild's words", result(projection.Pair{Expected: item2("tool/result"), Got: item2("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: "Error: code run failed (exception): Expression expected", Got: "Error: code run failed (exception): Unexpected \";\""}}}), "run_code's syntax errors are esbuild's words"},
		{"another exception", result(projection.Pair{Expected: item2("tool/result"), Got: item2("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: "Error: code run failed (exception): boom", Got: "Error: code run failed (exception): bang"}}}), ""},
		{"rg 15's prefix", result(projection.Pair{Expected: item2("tool/result"), Got: item2("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: "Error: glob search failed (exit 2): rg: missing-dir: IO error", Got: "Error: glob search failed (exit 2): missing-dir: IO error"}}}), rgDeparture},
		{"rg 15's words", result(projection.Pair{Expected: item2("tool/result"), Got: item2("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: "Error: grep pattern rejected by ripgrep: rg: regex parse error:\n    (?:(unclosed)", Got: "Error: grep pattern rejected by ripgrep: regex parse error:\n    (unclosed"}}}), rgDeparture},
		{"another exit code", result(projection.Pair{Expected: item2("tool/result"), Got: item2("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: "Error: glob search failed (exit 2): rg: missing-dir: IO error", Got: "Error: glob search failed (exit 1): missing-dir: IO error"}}}), ""},
		{"no rg quote", result(projection.Pair{Expected: item2("tool/result"), Got: item2("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: "Error: glob search failed (exit 2): missing-dir", Got: "Error: glob search failed (exit 2): other-dir"}}}), ""},
		{"rg's prefix and another field", result(projection.Pair{Expected: item2("tool/result"), Got: item2("tool/result"), Diffs: []projection.FieldDiff{{Path: "text", Expected: "rg: x", Got: "x"}, {Path: "isError", Expected: true, Got: false}}}), ""},
		{"a leftover process's late line", text("parent\nchild\n", "parent\n"), leftoverDeparture},
		{"late lines between", text("a\nlate\nb\nlater\n[exit code: 1]", "a\nb\n[exit code: 1]"), leftoverDeparture},
		{"a line that differs", text("parent\nchild\n", "parent\nchilD"), ""},
		{"a line more of ours", text("parent\n", "parent\nchild\n"), ""},
		{"lines out of order", text("a\nb\nc", "b\na"), ""},
		{"escalation to the current mode", &replay.Result{Verdict: replay.Mismatch, Flags: []string{`text: expected "Error: sandbox escalation to \"workspace-write\" is not strictly wider than this call's current \"workspace-write\" mode"`}}, "escalation to the current mode"},
	} {
		if got := departureOf(tc.r); got != tc.want {
			t.Errorf("%s: departure %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRemarkDetail: a kept case's remark names "first difference" once, on
// one line.
func TestRemarkDetail(t *testing.T) {
	for in, want := range map[string]string{
		"  first difference: turn 1, tool/result c1 ok\n    text: expected \"a\", got \"b\"\n": "turn 1, tool/result c1 ok",
		"  flag: a stale projection\n":  "flag: a stale projection",
		"":                              "",
		"first difference:  turn  2, x": "turn 2, x",
	} {
		if got := remarkDetail(in); got != want {
			t.Errorf("remarkDetail(%q) = %q, want %q", in, got, want)
		}
	}
}

const leftoverDeparture = "a call's processes end with its root: what they would print later is not in its output"

const rgDeparture = "rg's own error text is Debian's rg 13's (upstream's rg 15 prefixes it with \"rg: \" and words some errors otherwise)"
