package jsjson

import "testing"

func TestLossless(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{`{}`, true},
		{`"not json"`, true},
		{`0`, true},
		{`0.0`, true},
		{`-1`, true},
		{`1e308`, true},
		{`1.7976931348623157e308`, true},
		{`-0`, false},
		{`-0.0`, false},
		{`-0e5`, false},
		{`-1e-400`, false},
		{`1e-400`, true},
		{`1e999`, false},
		{`-1e999`, false},
		{`1.7976931348623159e308`, false},
		{`{"a":{"b":[1,2,{"c":-0}]}}`, false},
		{`{"a":{"b":[1,2,{"c":0}]}}`, true},
		{`[1,[2,[3,[1e400]]]]`, false},
		{`{"-0":"-0"}`, true},
	} {
		v, err := Parse([]byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if got := Lossless(v); got != tc.want {
			t.Errorf("Lossless(%s) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
