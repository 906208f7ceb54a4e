package session

import "testing"

func TestStringify(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`{"a":[],"b":{},"c":[1,{"d":null}]}`, "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ]\n}"},
		{`{"z":1,"a":2}`, "{\n  \"z\": 1,\n  \"a\": 2\n}"},
		{`"\u003c\u0026\u003e\u2028\t\u001f"`, "\"<&>\u2028\\t\\u001f\""},
		{`{"n":1e3,"f":1.50,"t":true}`, "{\n  \"n\": 1e3,\n  \"f\": 1.50,\n  \"t\": true\n}"},
		{`{"broken":`, "null"},
	}
	for _, tc := range tests {
		if got := Stringify([]byte(tc.in)); got != tc.want {
			t.Errorf("Stringify(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
