package compile_test

import (
	"errors"
	"testing"

	"github.com/dshsim/dshsim/tools/code/compile"
)

func TestCompileErasable(t *testing.T) {
	cases := []struct{ code, want string }{
		{"", ""},
		{"const x: number = 1;\ninterface A { a: string }\ntype T = A;\nreturn x as number;", "  const x = 1;\n  return x;\n"},
		{"const f = <T,>(v: T): T => v;\nreturn f(1)!;", "  const f = (v) => v;\n  return f(1);\n"},
		{"class A { private x = 1; declare y: string; m(this: A, a?: number): void {} }\nreturn new A() satisfies A;", "  class A {\n    x = 1;\n    m(a) {\n    }\n  }\n  return new A();\n"},
		{"declare enum E { A }\nreturn 1;", "  return 1;\n"},
		{"const o = { enum: 1 };\nreturn o.enum + \"enum X { \".length;", "  const o = { enum: 1 };\n  return o.enum + \"enum X { \".length;\n"},
		{"// enum X {\nreturn `enum Y {${1}`;", "  return `enum Y {${1}`;\n"},
		{"class B { constructor(a: number, b = a) { } }\nreturn new B(1);", "  class B {\n    constructor(a, b = a) {\n    }\n  }\n  return new B(1);\n"},
		{"const r = /enum X {/g;\nreturn r;", "  const r = /enum X {/g;\n  return r;\n"},
		{"const t = `${ {a: `enum Q {`}.a } enum Z {`;\nreturn t;", "  const t = `${{ a: `enum Q {` }.a} enum Z {`;\n  return t;\n"},
		{"let n = 4; return n! / 2 / 1;", "  let n = 4;\n  return n / 2 / 1;\n"},
		{"return 'é' + x;", "  return \"é\" + x;\n"},
	}
	for _, c := range cases {
		got, err := compile.Compile(c.code)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.code, err)
			continue
		}
		if got != c.want {
			t.Errorf("Compile(%q)\n got: %q\nwant: %q", c.code, got, c.want)
		}
	}
}

func TestCompileRejects(t *testing.T) {
	cases := []struct {
		name, code, text string
		line             int
	}{
		{"enum", "const a = 1;\nenum Color { Red }\nreturn Color.Red;", "TypeScript enum is not supported in strip-only mode", 3},
		{"const enum", "const enum E { A }", "TypeScript enum is not supported in strip-only mode", 2},
		{"exported enum inside a block", "if (true) { enum E { A } }", "TypeScript enum is not supported in strip-only mode", 2},
		{"parameter property", "class P {\n  constructor(a: number, private readonly x: number) {}\n}", "TypeScript parameter property is not supported in strip-only mode", 3},
		{"parameter property with a default", "class P { constructor(protected x = 1) {} }", "TypeScript parameter property is not supported in strip-only mode", 2},
		{"parameter property on a nested class", "const f = () => class { constructor(override y: number) {} };", "TypeScript parameter property is not supported in strip-only mode", 2},
		{"namespace", "namespace N { export const a = 1 }", `Expected ";" but found "N"`, 2},
		{"import equals", "import fs = require('fs');", `Unexpected "fs"`, 2},
		{"export equals", "export = 1", `Unexpected "export"`, 2},
		{"syntax error counts the wrapper line", "const a = 1\nconst b = a +\n", `Unexpected "}"`, 5},
		{"unterminated string", "return 'abc", "Unterminated string literal", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := compile.Compile(c.code)
			var ce *compile.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%q) = %v, want a compile error", c.code, err)
			}
			if ce.Text != c.text || ce.Line != c.line {
				t.Errorf("got %q at line %d, want %q at line %d", ce.Text, ce.Line, c.text, c.line)
			}
			// the model sees the reason alone, as Node 22.19+'s
			// stripTypeScriptTypes words it (no source frame)
			if err.Error() != c.text {
				t.Errorf("Error() = %q, want %q", err.Error(), c.text)
			}
		})
	}
}

// TestCompileErrorColumn: the column is 0-based in bytes of the offending
// line (the enum's const, the parameter property's modifier, esbuild's own).
func TestCompileErrorColumn(t *testing.T) {
	for code, col := range map[string]int{
		"  const enum E { A }": 2,
		"class P {\n  constructor(a: number, private readonly x: number) {}\n}": 25,
		"namespace N { export const a = 1 }":                                    10,
	} {
		_, err := compile.Compile(code)
		var ce *compile.Error
		if !errors.As(err, &ce) || ce.Column != col {
			t.Errorf("Compile(%q) = %#v, want column %d", code, err, col)
		}
	}
}
