package jsjson

import (
	"encoding/json"
	"errors"
	"math"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestAgainstNode compares number formatting, string quoting and the
// parse/stringify round trip, compact and indented, with the real
// JSON.stringify of the node on PATH.
func TestAgainstNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node on PATH")
	}
	nums := []float64{3.14159, 1e21, 1e-7, 123e-20, 2e-6, 1 / 3.0, 1e300, 255, -0.000123, 4.35, 0.1 + 0.2}
	texts := []string{
		`{"b":1,"a":[1,2,{"c":"\u2028<>&é😀\u0000\u001f\t"}],"2":null,"1":true}`,
		`["\ud800x","\udc00","\ud83d\ude00","\/",  1.0e2 , -0.0, 1E-8]`,
		`"plain"`, `[]`, `{}`, `{"a":1,"b":2,"a":3}`, `{"4294967295":1,"4294967294":2,"01":3,"10":4,"9":5}`, `[[[[[[]]]]]]`, `{"":{"":""}}`,
	}
	numsJSON, _ := json.Marshal(nums)
	textsJSON, _ := json.Marshal(texts)
	script := `const nums = JSON.parse(process.argv[1]); const texts = JSON.parse(process.argv[2]);
process.stdout.write(JSON.stringify({nums: nums.map(String), texts: texts.map(t => JSON.stringify(JSON.parse(t))), pretty: texts.map(t => JSON.stringify(JSON.parse(t), null, 2))}))`
	out, err := exec.Command(node, "-e", script, string(numsJSON), string(textsJSON)).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want struct {
		Nums   []string `json:"nums"`
		Texts  []string `json:"texts"`
		Pretty []string `json:"pretty"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, f := range nums {
		if got := FormatNumber(f); got != want.Nums[i] {
			t.Errorf("FormatNumber(%v) = %q, node says %q", f, got, want.Nums[i])
		}
	}
	for i, text := range texts {
		v, err := Parse([]byte(text))
		if err != nil {
			t.Errorf("Parse(%s): %v", text, err)
			continue
		}
		if got := Stringify(v); got != want.Texts[i] {
			t.Errorf("Stringify(Parse(%s))\n got: %s\nnode: %s", text, got, want.Texts[i])
		}
		if got := StringifyIndent(v, "  "); got != want.Pretty[i] {
			t.Errorf("StringifyIndent(Parse(%s))\n got: %s\nnode: %s", text, got, want.Pretty[i])
		}
	}
}

func TestQuotedSizeMatchesQuote(t *testing.T) {
	cases := [][]uint16{
		{}, {'a'}, {'"', '\\', '\n', 0x1f, 0x7f}, utf16.Encode([]rune("é€😀")), {0xd800}, {0xdc00, 0xd800}, {0xd83d, 0xde00},
	}
	for _, u := range cases {
		if q := QuoteUnits(u); QuotedSize(u) != len(q) {
			t.Errorf("QuotedSize(%v) = %d, len(%s) = %d", u, QuotedSize(u), q, len(q))
		}
	}
	if got := QuoteUnits([]uint16{0xd800, 'x'}); got != `"\ud800x"` {
		t.Errorf("lone surrogate: %s", got)
	}
	if got := Quote("<&>\u2028"); got != "\"<&>\u2028\"" {
		t.Errorf("Quote escapes like Go: %s", got)
	}
}

// TestParseKeepsOrderAndRejectsBadInput: members keep JavaScript's order and
// a lone surrogate survives the round trip; malformed text is a
// *SyntaxError; what JSON.parse accepts but a double or UTF-8 cannot hold
// reads as JavaScript reads it.
func TestParseKeepsOrderAndRejectsBadInput(t *testing.T) {
	v, err := Parse([]byte(` {"z":1,"a":{"y":[true,false,null]},"m":"\ud800"} `))
	if err != nil {
		t.Fatal(err)
	}
	if got := Stringify(v); got != `{"z":1,"a":{"y":[true,false,null]},"m":"\ud800"}` {
		t.Errorf("round trip: %s", got)
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a"}`, `{"a":1,}`, `01`, `1.`, `1e`, `"\x"`, "\"\x01\"", `tru`, `nul`, `[1] 2`, `{1:2}`, `-`, `"\u12"`} {
		var se *SyntaxError
		if _, err := Parse([]byte(bad)); !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a SyntaxError", bad, err)
		}
	}
	if v, err := Parse([]byte(`[1e999,-1e999]`)); err != nil || !math.IsInf(v.Elems[0].Num, 1) || !math.IsInf(v.Elems[1].Num, -1) || Stringify(v) != `[null,null]` {
		t.Errorf("an overflowing number: %v, want Infinity written as null", err)
	}
	if v, err := Parse([]byte("\"a\xffb\"")); err != nil || v.Str() != "a\uFFFDb" {
		t.Errorf("a byte that is not UTF-8: %v, want U+FFFD", err)
	}
}

// TestParseDeepIsIterative: MaxDepth levels parse and write back without
// recursion; one more is refused.
func TestParseDeepIsIterative(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	v, err := Parse([]byte(deep))
	if err != nil {
		t.Fatal(err)
	}
	if got := Stringify(v); got != deep {
		t.Errorf("deep round trip differs (len %d vs %d)", len(got), len(deep))
	}
	var se *SyntaxError
	if _, err := Parse([]byte("[" + deep + "]")); !errors.As(err, &se) || se.Problem != "nesting too deep" {
		t.Errorf("MaxDepth+1: %v", err)
	}
}
