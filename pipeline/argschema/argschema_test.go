package argschema_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/pipeline/argschema"
)

// TestUpstreamTruth checks every row of testdata/cases.json against
// testdata/upstream-truth.json: the violations upstream's own
// validateJsonSchemaValue (dsh-tools 0.1.0-rc.8, run by node from the
// installed package) produced for the same schema and arguments. One row per
// rule: missing required (in "required" order), each type message, enum,
// const, integer, -0, null as a present value, unknown root keys passing,
// closed nested objects, array item paths, oneOf counts, walk order.
func TestUpstreamTruth(t *testing.T) {
	var schemas map[string]json.RawMessage
	var cases []struct {
		Name   string          `json:"name"`
		Schema string          `json:"schema"`
		Args   json.RawMessage `json:"args"`
	}
	var truth struct {
		Rows []struct {
			Name       string   `json:"name"`
			Violations []string `json:"violations"`
		} `json:"rows"`
	}
	read(t, "schemas.json", &schemas)
	read(t, "cases.json", &cases)
	read(t, "upstream-truth.json", &truth)
	if len(truth.Rows) != len(cases) {
		t.Fatalf("upstream-truth.json has %d rows for %d cases: regenerate it", len(truth.Rows), len(cases))
	}
	compiled := map[string]*argschema.Schema{}
	for name, raw := range schemas {
		s, err := argschema.Compile(raw)
		if err != nil {
			t.Fatalf("schema %s: %v", name, err)
		}
		compiled[name] = s
	}
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if truth.Rows[i].Name != c.Name {
				t.Fatalf("row %d is %q in upstream-truth.json", i, truth.Rows[i].Name)
			}
			// JSON text cannot hold -0 through encoding/json: the case marks it.
			args := bytes.ReplaceAll(c.Args, []byte(`"NEGZERO"`), []byte(`-0`))
			got := compiled[c.Schema].Validate(args)
			want := truth.Rows[i].Violations
			if len(want) == 0 {
				want = nil
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Validate(%s) (-upstream +ours):\n%s", args, diff)
			}
		})
	}
}

func read(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("testdata/%s: %v", name, err)
	}
}

// TestDuplicateKeyTakesLastValue: JSON.parse keeps the last value of a
// repeated key, so the last one is what is checked.
func TestDuplicateKeyTakesLastValue(t *testing.T) {
	s, err := argschema.Compile([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Validate([]byte(`{"a":"x","a":1}`)); len(got) != 1 || got[0] != `"a" must be a string` {
		t.Errorf("got %q", got)
	}
	if got := s.Validate([]byte(`{"a":1,"a":"x"}`)); got != nil {
		t.Errorf("got %q", got)
	}
	if got := s.Validate([]byte(`{"a":`)); len(got) != 1 || got[0] != `"arguments" must be a lossless JSON value` {
		t.Errorf("not JSON: got %q", got)
	}
}

// TestCompileRefusesOutsideTheSubset: keywords outside the enforced subset
// (there is no minimum/maximum/pattern rule) and malformed subset keywords
// are refused when the tool is registered, as upstream's defineTool throws.
func TestCompileRefusesOutsideTheSubset(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"number","minimum":1}`, `schema.minimum is not a supported keyword`},
		{`{"type":"string","pattern":"x"}`, `schema.pattern is not a supported keyword`},
		{`{"type":["string","null"]}`, `schema.type must be a single type string (type arrays are not supported)`},
		{`{"type":"date"}`, `schema.type must be one of object/array/string/number/integer/boolean/null`},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, `schema.required names "b" which is not in properties`},
		{`{"type":"object","additionalProperties":{}}`, `schema.additionalProperties must be a boolean`},
		{`{"oneOf":[{"type":"string"}]}`, `schema.oneOf must be an array of at least two schemas`},
		{`{"type":"string","oneOf":[{"type":"string"},{"type":"null"}]}`, `schema cannot declare both type and oneOf`},
		{`{"type":"string","enum":[1]}`, `schema.enum must be a non-empty array of string values`},
		{`{"type":"string","enum":["a"],"const":"b"}`, `schema.const must be one of schema.enum when both are declared`},
		{`{"type":"string","items":{}}`, `schema.items is not supported on type "string"`},
		{`{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`, `schema.properties.a.minLength is not a supported keyword`},
		{`{"type":"object","properties":{"a":3}}`, `schema.properties.a must be a schema object`},
		{`[]`, `schema must be a schema object`},
	} {
		_, err := argschema.Compile([]byte(tc.schema))
		if err == nil || !strings.HasPrefix(err.Error(), "unsupported JSON schema: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%s) = %v, want an error with %q", tc.schema, err, tc.want)
		}
	}
	for _, ok := range []string{`{}`, `{"description":"any"}`, `{"type":"object"}`, `{"type":"integer","const":2,"title":"t"}`} {
		if _, err := argschema.Compile([]byte(ok)); err != nil {
			t.Errorf("Compile(%s): %v", ok, err)
		}
	}
}

// ValidateAt names the arguments root in the violations, as a body that
// checks a raw schema itself does upstream ("value.extra").
func TestValidateAtNamesTheRoot(t *testing.T) {
	s, err := argschema.Compile([]byte(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for root, want := range map[string]string{
		"":      `"extra" is not a declared property (additionalProperties: false)`,
		"value": `"value.extra" is not a declared property (additionalProperties: false)`,
	} {
		if got := s.ValidateAt([]byte(`{"answer":"a","extra":1}`), root); len(got) != 1 || got[0] != want {
			t.Errorf("root %q: %q, want %q", root, got, want)
		}
	}
}
