package code

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
)

// TestSchemaMatchesRecording renders the wire tool list of code mode
// ([run_code]) as the recording pins it and compares bytes.
func TestSchemaMatchesRecording(t *testing.T) {
	want, err := os.ReadFile("../../transcripts/code-mode-turn/tool-schemas.expected.json")
	if err != nil {
		t.Fatal(err)
	}
	regs, err := New(Config{Deps: Deps{Registry: pipeline.NewRegistry()}})
	if err != nil {
		t.Fatal(err)
	}
	def := regs[0].Def
	type wire struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	got, err := json.MarshalIndent(struct {
		Initial []wire `json:"initial"`
		Changes []any  `json:"changes"`
	}{[]wire{{def.Name, def.Description, def.Parameters}}, []any{}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("run_code schema\n got: %s\nwant: %s", got, want)
	}
}

func TestSchemaFlavors(t *testing.T) {
	if d, err := Description(""); err != nil || !strings.HasPrefix(d, "Execute a TypeScript program") {
		t.Errorf("no runtime: %q %v", d, err)
	}
	if p, err := Parameters(LanguagePython); err != nil || !strings.Contains(string(p), "The program: the body of an async Python function.") {
		t.Errorf("python: %s %v", p, err)
	}
	if _, err := Parameters("lua"); err == nil || err.Error() != `dsh-tools: no run_code schema flavor registered for runtime language "lua" (known: "typescript", "python")` {
		t.Errorf("unknown language: %v", err)
	}
}

func mustParse(t *testing.T, s string) *jsjson.Value {
	t.Helper()
	v, err := jsjson.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRender(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"BOTH_OK\n"`, "BOTH_OK\n"},
		{`"a\"b"`, `a"b`},
		{`null`, "null"},
		{`true`, "true"},
		{`1e21`, "1e+21"},
		{`0.1`, "0.1"},
		{`[]`, "[]"},
		{`{}`, "{}"},
		{`{"n":42,"ok":true}`, "{\n  \"n\": 42,\n  \"ok\": true\n}"},
		{`[1,[2,{"a":[]}],"x\u2028<"]`, "[\n  1,\n  [\n    2,\n    {\n      \"a\": []\n    }\n  ],\n  \"x\u2028<\"\n]"},
		{`[[[[[[1,2]]]]]]`, "[\n  [\n    [\n      [\n        [\n          [1,2]\n        ]\n      ]\n    ]\n  ]\n]"},
		{`{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}`, "{\n  \"a\": {\n    \"b\": {\n      \"c\": {\n        \"d\": {\n          \"e\": {\"f\":1}\n        }\n      }\n    }\n  }\n}"},
		{`["\ud800"]`, "[\n  \"\\ud800\"\n]"},
	}
	for _, c := range cases {
		if got := Render(mustParse(t, c.in)); got != c.want {
			t.Errorf("Render(%s)\n got: %q\nwant: %q", c.in, got, c.want)
		}
	}
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	if got := Render(mustParse(t, deep)); len(got) >= 11000 {
		t.Errorf("5000-deep render is %d chars, want < 11000", len(got))
	}
}

func TestText(t *testing.T) {
	cases := []struct {
		logs   []string
		result string
		want   string
	}{
		{[]string{"captured output"}, `"CODE_ONE+CODE_TWO"`, "captured output\nCODE_ONE+CODE_TWO"},
		{nil, `"BOTH_OK\n"`, "BOTH_OK\n"},
		{[]string{"a", "b"}, "", "a\nb"},
		{[]string{}, "", NoOutput},
		{[]string{""}, `""`, NoOutput},
		{nil, `{"n":42,"ok":true}`, "{\n  \"n\": 42,\n  \"ok\": true\n}"},
	}
	for _, c := range cases {
		var v *jsjson.Value
		if c.result != "" {
			v = mustParse(t, c.result)
		}
		if got := Text(c.logs, v); got != c.want {
			t.Errorf("Text(%q, %s) = %q, want %q", c.logs, c.result, got, c.want)
		}
	}
	if got := string(value([]string{"a\u2028"}, json.RawMessage(`{"x":1}`))); got != "{\"logs\":[\"a\u2028\"],\"result\":{\"x\":1}}" {
		t.Errorf("value: %s", got)
	}
	if got := string(value([]string{}, nil)); got != `{"logs":[]}` {
		t.Errorf("value without result: %s", got)
	}
}

func TestRunFailedError(t *testing.T) {
	e := &RunFailedError{Kind: "output-limit", Message: "outer output exceeded 8 bytes", Logs: []string{"captured before failure"}}
	res := pipeline.ErrorResult(e)
	if res.Text() != "Error: code run failed (output-limit): outer output exceeded 8 bytes\nCaptured output:\ncaptured before failure" ||
		res.Error.Info == nil || res.Error.Info.Name != "CodeRunFailedError" || res.Error.Info.Code != "CODE_RUN_FAILED" {
		t.Errorf("%+v %+v", res, res.Error.Info)
	}
	if got := (&RunFailedError{Kind: "timeout", Message: "x"}).Error(); got != "code run failed (timeout): x" {
		t.Errorf("no logs: %q", got)
	}
}

// TestSections: code mode brings tools:code-only and tools:sdk, both mode
// tools:sdk alone, declaring the visible tools but run_code; without a
// runtime both modes fail with upstream's missing-runtime error.
func TestSections(t *testing.T) {
	visible := []pipeline.Tool{{Name: Name}, {Name: "echo", Description: "Echo.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
	for _, tc := range []struct {
		mode    string
		runtime bool
		want    string
	}{
		{"code", true, "tools:code-only@99,tools:sdk@150"},
		{"both", true, "tools:sdk@150"},
		{"code", false, ""},
		{"both", false, ""},
	} {
		secs, err := Sections(tc.mode, tc.runtime, visible)
		if !tc.runtime {
			if err == nil || err.Error() != MissingRuntimeError(tc.mode).Error() {
				t.Errorf("%s without a runtime: %v", tc.mode, err)
			}
			continue
		}
		var got []string
		for _, s := range secs {
			got = append(got, fmt.Sprintf("%s@%g", s.Name, s.Order))
		}
		if strings.Join(got, ",") != tc.want || err != nil {
			t.Errorf("%s: %v %v, want %s", tc.mode, got, err, tc.want)
		}
		if sdk := secs[len(secs)-1].Text; !strings.Contains(sdk, "echo") || strings.Contains(sdk, Name+":") {
			t.Errorf("%s: the SDK does not declare echo alone:\n%s", tc.mode, sdk)
		}
	}
}
