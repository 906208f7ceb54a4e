package jsjson

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/dshsim/dshsim/harness"
)

type truthRow struct {
	Input string `json:"input"`
	Out   string `json:"out,omitempty"`
	Error bool   `json:"error,omitempty"`
}

func loadTruth(t *testing.T, path string) []truthRow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var truth struct{ Rows []truthRow }
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	return truth.Rows
}

// TestRoundTripLikeJavaScript: Stringify(Parse(x)) is byte for byte what
// JSON.stringify(JSON.parse(x)) gave in node, and Parse fails where
// JSON.parse threw.
func TestRoundTripLikeJavaScript(t *testing.T) {
	for _, row := range loadTruth(t, "testdata/node-truth.json") {
		v, err := Parse([]byte(row.Input))
		if row.Error {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("Parse(%q): JSON.parse throws, got %v", row.Input, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", row.Input, err)
			continue
		}
		if got := Stringify(v); got != row.Out {
			t.Errorf("Stringify(Parse(%q))\n got  %s\n want %s", row.Input, got, row.Out)
		}
	}
}

// TestTruthFileIsJavaScript re-derives node-truth.json with node.
func TestTruthFileIsJavaScript(t *testing.T) {
	var fresh struct{ Rows []truthRow }
	if !harness.NodeTruth(t, "testdata", &fresh) {
		return
	}
	pinned := loadTruth(t, "testdata/node-truth.json")
	if len(pinned) != len(fresh.Rows) {
		t.Fatalf("node-truth.json has %d rows, node gives %d (DSHSIM_UPDATE=1 rewrites it)", len(pinned), len(fresh.Rows))
	}
	for i := range pinned {
		if pinned[i] != fresh.Rows[i] {
			t.Errorf("input %q: node says %+v, node-truth.json says %+v", pinned[i].Input, fresh.Rows[i], pinned[i])
		}
	}
}

// TestFormatNumber: Number.prototype.toString's digits and notation;
// JSON.stringify writes a non-finite number as null.
func TestFormatNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1, "-1"}, {-1.5, "-1.5"}, {0.1, "0.1"}, {0.5, "0.5"}, {42, "42"}, {100, "100"},
		{1e21, "1e+21"}, {1.5e21, "1.5e+21"}, {1e20, "100000000000000000000"}, {123456789012, "123456789012"},
		{1.5e-7, "1.5e-7"}, {1e-7, "1e-7"}, {1.25e-7, "1.25e-7"}, {1e-6, "0.000001"}, {-2e-7, "-2e-7"}, {-2.5e-10, "-2.5e-10"},
		{123.456, "123.456"}, {3.6819170000001122, "3.6819170000001122"}, {1.25e+25, "1.25e+25"},
		{5e-324, "5e-324"}, {math.MaxFloat64, "1.7976931348623157e+308"}, {9007199254740993, "9007199254740992"},
		{math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"}, {math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		if got := FormatNumber(tt.in); got != tt.want {
			t.Errorf("FormatNumber(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		if got := Stringify(&Value{Kind: Number, Num: f}); got != "null" {
			t.Errorf("Stringify(%v) = %s, want null", f, got)
		}
	}
}

func TestQuoteGoStrings(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a<b>&c", `"a<b>&c"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"\x1f\x7f", `"\u001f` + "\x7f" + `"`},
		{"bad\xffbyte", "\"bad\uFFFDbyte\""},
		{"tab\there", `"tab\there"`},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestMarshalLeavesHTMLAlone: <, > and & as they are, no trailing newline,
// and an unencodable value's error; MarshalIndent likewise, indented.
func TestMarshalLeavesHTMLAlone(t *testing.T) {
	got, err := Marshal(map[string]any{"a": "<b>&c", "n": []int{1}})
	if want := `{"a":"<b>&c","n":[1]}`; err != nil || string(got) != want {
		t.Errorf("Marshal = %s, %v; want %s", got, err, want)
	}
	if _, err := Marshal(math.Inf(1)); err == nil {
		t.Error("Marshal(+Inf): no error")
	}
	got, err = MarshalIndent(map[string]any{"a": "<b>", "n": []int{1}}, "  ")
	if want := "{\n  \"a\": \"<b>\",\n  \"n\": [\n    1\n  ]\n}"; err != nil || string(got) != want {
		t.Errorf("MarshalIndent = %q, %v; want %q", got, err, want)
	}
}

func TestOffsetsAndLines(t *testing.T) {
	src := []byte("{\n  \"hooks\": {\n    \"PreToolUse\": [ { \"matcher\": \"[\" } ]\n  }\n}")
	v, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	m := v.Get("hooks").Get("PreToolUse").Elems[0].Get("matcher")
	if l, c := LineOf(src, m.Offset); l != 3 || c != 34 {
		t.Errorf("matcher at line %d column %d, want 3:34", l, c)
	}
	_, err = Parse([]byte("{\n  \"a\": 1,\n}"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || se.Column != 1 {
		t.Errorf("got %v, want an error at 3:1", err)
	}
}

func TestLoneSurrogates(t *testing.T) {
	v, err := Parse([]byte(`"a\ud800b"`))
	if err != nil {
		t.Fatal(err)
	}
	if !v.HasLoneSurrogate() || v.Str() != "a\uFFFDb" {
		t.Errorf("HasLoneSurrogate=%v Str=%q", v.HasLoneSurrogate(), v.Str())
	}
	if pair, _ := Parse([]byte(`"\ud83d\ude00"`)); pair.HasLoneSurrogate() {
		t.Error("a surrogate pair read as lone")
	}
	if got := Stringify(v); got != `"a\ud800b"` {
		t.Errorf("Stringify = %s", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"\ud800"}]}`, `1e400`, `"\u2028"`, `{"1":0,"a":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse([]byte(s))
		if err != nil {
			return
		}
		out := Stringify(v)
		w, err := Parse([]byte(out))
		if err != nil {
			t.Fatalf("Stringify output %q does not parse: %v", out, err)
		}
		if again := Stringify(w); again != out {
			t.Fatalf("not stable: %q then %q", out, again)
		}
	})
}
