package sdk

import (
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// TypeOf renders a JSON Schema as TypeScript type text at indent level
// (two spaces per level; nested members sit one level deeper, closing
// braces at level). An absent schema is JsonValue; a schema that fails the
// shape check ([wellFormed]) is "unknown". It never fails.
func TypeOf(schema []byte, level int) string {
	if len(schema) == 0 {
		return "JsonValue"
	}
	v, err := jsjson.Parse(schema)
	if err != nil || !wellFormed(v) {
		return "unknown"
	}
	var b strings.Builder
	render(&b, v, level)
	return b.String()
}

var scalarWord = map[string]string{"string": "string", "number": "number", "integer": "number", "boolean": "boolean", "null": "null"}

// render writes the type of a well-formed schema node. Nesting costs Go
// stack only (growable); the parser already bounds depth.
func render(b *strings.Builder, s *jsjson.Value, level int) {
	if one := s.Get("oneOf"); one != nil {
		for i, branch := range one.Elems {
			if i > 0 {
				b.WriteString(" | ")
			}
			render(b, branch, level)
		}
		return
	}
	t := s.Get("type")
	if t == nil {
		b.WriteString("JsonValue")
		return
	}
	switch typ := t.Str(); typ {
	case "array":
		items := s.Get("items")
		if items == nil {
			b.WriteString("JsonValue[]")
			return
		}
		var ib strings.Builder
		render(&ib, items, level)
		it := ib.String()
		if strings.ContainsAny(it, "|&") {
			b.WriteString("(" + it + ")[]")
		} else {
			b.WriteString(it + "[]")
		}
	case "object":
		renderObject(b, s, level)
	default:
		if c := s.Get("const"); c != nil {
			b.WriteString(jsjson.Stringify(c))
			return
		}
		if e := s.Get("enum"); e != nil {
			for i, lit := range e.Elems {
				if i > 0 {
					b.WriteString(" | ")
				}
				b.WriteString(jsjson.Stringify(lit))
			}
			return
		}
		b.WriteString(scalarWord[typ])
	}
}

func renderObject(b *strings.Builder, s *jsjson.Value, level int) {
	props := s.Get("properties")
	closed := false
	if ap := s.Get("additionalProperties"); ap != nil && ap.Kind == jsjson.Bool && !ap.Bool {
		closed = true
	}
	if props == nil || len(props.Members) == 0 {
		if closed {
			b.WriteString("Record<string, never>")
		} else {
			b.WriteString("Record<string, JsonValue>")
		}
		return
	}
	required := map[string]bool{}
	if r := s.Get("required"); r != nil {
		for _, e := range r.Elems {
			required[e.Str()] = true
		}
	}
	inner := strings.Repeat("  ", level+1)
	b.WriteString("{\n")
	for _, m := range props.Members {
		name := m.KeyString()
		if d := m.Value.Get("description"); d != nil {
			if doc := DocLine(d.Str()); doc != "" {
				b.WriteString(inner + doc + "\n")
			}
		}
		b.WriteString(inner + Key(name))
		if !required[name] {
			b.WriteString("?")
		}
		b.WriteString(": ")
		render(b, m.Value, level+1)
		b.WriteString(";\n")
	}
	b.WriteString(strings.Repeat("  ", level) + "}")
	if !closed {
		b.WriteString(" & Record<string, JsonValue>")
	}
}

var knownType = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "null": true, "array": true, "object": true}

// wellFormed is the shape check a schema must pass to be rendered: every
// node an object; type one of the seven names; oneOf a non-empty array of
// schemas; enum a non-empty array; properties an object of schemas;
// required an array of strings; items a schema; additionalProperties a
// boolean or a schema; description a string. It walks with an explicit
// stack.
func wellFormed(root *jsjson.Value) bool {
	stack := []*jsjson.Value{root}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.Kind != jsjson.Object {
			return false
		}
		for _, m := range s.Members {
			v := m.Value
			switch m.KeyString() {
			case "type":
				if v.Kind != jsjson.String || !knownType[v.Str()] {
					return false
				}
			case "oneOf":
				if v.Kind != jsjson.Array || len(v.Elems) == 0 {
					return false
				}
				stack = append(stack, v.Elems...)
			case "enum":
				if v.Kind != jsjson.Array || len(v.Elems) == 0 {
					return false
				}
			case "properties":
				if v.Kind != jsjson.Object {
					return false
				}
				for _, p := range v.Members {
					stack = append(stack, p.Value)
				}
			case "required":
				if v.Kind != jsjson.Array {
					return false
				}
				for _, e := range v.Elems {
					if e.Kind != jsjson.String {
						return false
					}
				}
			case "items":
				stack = append(stack, v)
			case "additionalProperties":
				if v.Kind != jsjson.Bool {
					stack = append(stack, v)
				}
			case "description":
				if v.Kind != jsjson.String {
					return false
				}
			}
		}
	}
	return true
}
