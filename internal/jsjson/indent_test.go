package jsjson

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// indentCases are JSON texts with what JSON.stringify(JSON.parse(x), null, 2)
// prints (node 22), the shape session_event_read shows an event in.
var indentCases = []struct{ in, want string }{
	{`{}`, `{}`},
	{`[]`, `[]`},
	{`{"a":[],"b":{},"c":[1,{"d":null}]}`, "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ]\n}"},
	{`{"z":1,"a":2,"2":3}`, "{\n  \"2\": 3,\n  \"z\": 1,\n  \"a\": 2\n}"},
	{`"\u003c\u0026\u003e\u2028\t\u001f—"`, "\"<&>\u2028\\t\\u001f—\""},
	{`{"n":1e3,"f":1.50,"t":true,"s":"x"}`, "{\n  \"n\": 1000,\n  \"f\": 1.5,\n  \"t\": true,\n  \"s\": \"x\"\n}"},
	{`[[[]]]`, "[\n  [\n    []\n  ]\n]"},
}

func TestStringifyIndent(t *testing.T) {
	for _, tc := range indentCases {
		v, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := StringifyIndent(v, "  "); got != tc.want {
			t.Errorf("StringifyIndent(%s)\n got  %q\n want %q", tc.in, got, tc.want)
		}
		if got, want := StringifyIndent(v, ""), Stringify(v); got != want {
			t.Errorf("StringifyIndent without an indent = %q, Stringify = %q", got, want)
		}
	}
}

// TestStringifyIndentIsJavaScript checks indentCases against node.
func TestStringifyIndentIsJavaScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node (a JavaScript engine) on PATH to check the indented cases")
	}
	inputs := make([]string, len(indentCases))
	for i, tc := range indentCases {
		inputs[i] = tc.in
	}
	in, _ := json.Marshal(inputs)
	out, err := exec.Command(node, "-e", "process.stdout.write(JSON.stringify("+string(in)+".map((x) => JSON.stringify(JSON.parse(x), null, 2))))").Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(indentCases) {
		t.Fatalf("node printed %q (%v)", out, err)
	}
	for i, tc := range indentCases {
		if got[i] != tc.want {
			t.Errorf("node prints %q for %s, the case says %q", got[i], tc.in, tc.want)
		}
	}
}

// TestStringifyDepth: containers above the depth are indented, the ones at
// it and below compact (the root is depth 0); depth 0 is Stringify.
func TestStringifyDepth(t *testing.T) {
	v, err := Parse([]byte(`{"a":{"b":[1,{"c":2}]},"d":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	for depth, want := range []string{
		`{"a":{"b":[1,{"c":2}]},"d":[]}`,
		"{\n  \"a\": {\"b\":[1,{\"c\":2}]},\n  \"d\": []\n}",
		"{\n  \"a\": {\n    \"b\": [1,{\"c\":2}]\n  },\n  \"d\": []\n}",
	} {
		if got := StringifyDepth(v, "  ", depth); got != want {
			t.Errorf("depth %d:\n got %q\nwant %q", depth, got, want)
		}
	}
	if got, want := StringifyDepth(v, "  ", 100), StringifyIndent(v, "  "); got != want {
		t.Errorf("a depth beyond the nesting is StringifyIndent: %q vs %q", got, want)
	}
}
