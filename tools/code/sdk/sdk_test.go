package sdk_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/tools/code/sdk"
)

// TestTypeTable pins the JSON Schema → TypeScript table (upstream's).
func TestTypeTable(t *testing.T) {
	cases := []struct {
		name, schema, want string
	}{
		{"absent", ``, `JsonValue`},
		{"empty schema", `{}`, `JsonValue`},
		{"json spec type (no type)", `{"description":"any"}`, `JsonValue`},
		{"oneOf", `{"oneOf":[{"type":"string"},{"type":"number"},{"type":"null"}]}`, `string | number | null`},
		{"oneOf wins over type", `{"type":"string","oneOf":[{"type":"boolean"}]}`, `boolean`},
		{"string", `{"type":"string"}`, `string`},
		{"number", `{"type":"number"}`, `number`},
		{"integer is number", `{"type":"integer"}`, `number`},
		{"boolean", `{"type":"boolean"}`, `boolean`},
		{"null", `{"type":"null"}`, `null`},
		{"const string", `{"type":"string","const":"a"}`, `"a"`},
		{"const wins over enum", `{"type":"string","const":"a","enum":["b","c"]}`, `"a"`},
		{"const number", `{"type":"number","const":2}`, `2`},
		{"const number formatted as JS", `{"type":"number","const":1e21}`, `1e+21`},
		{"const boolean", `{"type":"boolean","const":true}`, `true`},
		{"const string escaped as JSON.stringify", `{"type":"string","const":"a\"<b>\u2028"}`, "\"a\\\"<b>\u2028\""},
		{"enum", `{"type":"string","enum":["a","b"]}`, `"a" | "b"`},
		{"enum of numbers", `{"type":"integer","enum":[1,2.5]}`, `1 | 2.5`},
		{"array without items", `{"type":"array"}`, `JsonValue[]`},
		{"array of strings", `{"type":"array","items":{"type":"string"}}`, `string[]`},
		{"array of a union is parenthesised", `{"type":"array","items":{"oneOf":[{"type":"string"},{"type":"null"}]}}`, `(string | null)[]`},
		{"array of an open object is parenthesised", `{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}`, "({\n  a: string;\n} & Record<string, JsonValue>)[]"},
		{"array of a closed plain object is not", `{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}`, "{\n  a: string;\n}[]"},
		{"object without properties", `{"type":"object"}`, `Record<string, JsonValue>`},
		{"object with empty properties", `{"type":"object","properties":{}}`, `Record<string, JsonValue>`},
		{"closed object without properties", `{"type":"object","additionalProperties":false}`, `Record<string, never>`},
		{"additionalProperties schema keeps it open", `{"type":"object","properties":{"a":{}},"additionalProperties":{"type":"string"}}`, "{\n  a?: JsonValue;\n} & Record<string, JsonValue>"},
		{"properties in schema order, optional marked, keys quoted", `{"type":"object","properties":{"z":{"type":"string"},"my-mcp.tool":{"type":"number"},"$ok_1":{"type":"boolean"},"1a":{}},"required":["z"],"additionalProperties":false}`,
			"{\n  z: string;\n  \"my-mcp.tool\"?: number;\n  $ok_1?: boolean;\n  \"1a\"?: JsonValue;\n}"},
		{"doc lines collapse whitespace and escape */", `{"type":"object","properties":{"a":{"type":"string","description":"  one\n\ttwo\u00a0 three */ four "},"b":{"type":"string","description":"  "}},"required":["a","b"],"additionalProperties":false}`,
			"{\n  /** one two three *\\/ four */\n  a: string;\n  b: string;\n}"},
		{"nested indent", `{"type":"object","properties":{"o":{"type":"object","properties":{"p":{"type":"string"}},"required":["p"],"additionalProperties":false}},"required":["o"],"additionalProperties":false}`,
			"{\n  o: {\n    p: string;\n  };\n}"},
		{"malformed: unknown type", `{"type":"foo"}`, `unknown`},
		{"malformed: type list", `{"type":["string","null"]}`, `unknown`},
		{"malformed: not an object", `"string"`, `unknown`},
		{"malformed: not JSON", `{`, `unknown`},
		{"malformed: empty oneOf", `{"oneOf":[]}`, `unknown`},
		{"malformed deep inside fails the whole schema", `{"type":"object","properties":{"a":{"type":7}}}`, `unknown`},
		{"malformed: required not strings", `{"type":"object","properties":{"a":{}},"required":[1]}`, `unknown`},
		{"malformed: description not a string", `{"type":"string","description":3}`, `unknown`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sdk.TypeOf([]byte(c.schema), 0); got != c.want {
				t.Errorf("TypeOf(%s)\n got: %q\nwant: %q", c.schema, got, c.want)
			}
		})
	}
}

func TestDeepOneOfChainRenders(t *testing.T) {
	const depth = 5000
	schema := strings.Repeat(`{"oneOf":[`, depth) + `{"type":"string"}` + strings.Repeat(`]}`, depth)
	if got := sdk.TypeOf([]byte(schema), 0); got != "string" {
		t.Errorf("5000-deep oneOf chain: got %.40q", got)
	}
	deepArray := strings.Repeat(`{"type":"array","items":`, depth) + `{"type":"number"}` + strings.Repeat(`}`, depth)
	if got := sdk.TypeOf([]byte(deepArray), 0); got != "number"+strings.Repeat("[]", depth) {
		t.Errorf("5000-deep arrays: got %.40q", got)
	}
}

func TestKeyAndDocLine(t *testing.T) {
	for name, want := range map[string]string{"bash": "bash", "my-tool": `"my-tool"`, "__proto__": "__proto__", "a.b": `"a.b"`, "é": `"é"`, "": `""`} {
		if got := sdk.Key(name); got != want {
			t.Errorf("Key(%q) = %s, want %s", name, got, want)
		}
	}
	if got := sdk.DocLine(" \n "); got != "" {
		t.Errorf("blank description renders %q", got)
	}
}

// recordedTools reads the wire tools of the both-mode recording (every tool
// of upstream's default set, with run_code) and the output schemas written
// for them in testdata (their TypeScript is what the recording's SDK shows).
func recordedTools(t *testing.T) []sdk.Tool {
	t.Helper()
	var wire struct {
		Initial []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"initial"`
	}
	b, err := os.ReadFile("../../../transcripts/both-mode-turn/tool-schemas.expected.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	var outputs map[string]json.RawMessage
	b, err = os.ReadFile("testdata/outputs.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &outputs); err != nil {
		t.Fatal(err)
	}
	var tools []sdk.Tool
	for _, w := range wire.Initial {
		if w.Name == "run_code" {
			continue
		}
		out, ok := outputs[w.Name]
		if !ok {
			t.Fatalf("testdata/outputs.json has no output schema for %s", w.Name)
		}
		tools = append(tools, sdk.Tool{Name: w.Name, Description: w.Description, Parameters: w.Parameters, Output: out})
	}
	if len(tools) != 19 {
		t.Fatalf("%d tools besides run_code in the recording, want 19", len(tools))
	}
	return tools
}

// TestSectionMatchesRecording renders the SDK section from the recorded wire
// schemas and compares it byte for byte with the recorded system prompt's
// last section.
func TestSectionMatchesRecording(t *testing.T) {
	tools := recordedTools(t)
	prompt, err := os.ReadFile("../../../transcripts/code-mode-turn/system-prompt.expected.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(prompt), "## Writing code for run_code")
	if i < 0 {
		t.Fatal("the recorded prompt has no SDK section")
	}
	want := strings.TrimSuffix(string(prompt[i:]), "\n")
	// input order must not matter
	rev := make([]sdk.Tool, len(tools))
	for i, tl := range tools {
		rev[len(tools)-1-i] = tl
	}
	for _, in := range [][]sdk.Tool{tools, rev} {
		if got := sdk.Section(in); got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			for n := 0; n < max(len(gl), len(wl)); n++ {
				g, w := "", ""
				if n < len(gl) {
					g = gl[n]
				}
				if n < len(wl) {
					w = wl[n]
				}
				if g != w {
					t.Fatalf("section line %d\n got: %q\nwant: %q", n+1, g, w)
				}
			}
		}
	}
	if !strings.Contains(string(prompt), "\n"+sdk.CodeOnly+"\n") {
		t.Errorf("the recorded code-mode prompt does not hold the tools:code-only text %q", sdk.CodeOnly)
	}
}

func TestEmptySection(t *testing.T) {
	s := sdk.Section(nil)
	if !strings.Contains(s, "\n\ninterface ToolArgsMap {}\n\ninterface ToolOutputMap {}\n\ntype ToolName") || !strings.HasSuffix(s, "}\n```") {
		t.Errorf("empty tool set:\n%s", s)
	}
}
