package argschema

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// Schema is a compiled parameter schema; it is immutable and safe for
// concurrent use.
type Schema struct{ root *node }

// node is one compiled schema node. typ is "" for an annotation-only node
// (any JSON value) and for a oneOf node.
type node struct {
	typ        string
	oneOf      []*node
	props      []prop
	required   []string
	closed     bool // additionalProperties: false
	items      *node
	enum       *jsjson.Value // the enum array
	constant   *jsjson.Value
	declared   map[string]bool
	hasItems   bool
	hasEnum    bool
	hasConst   bool
	annotation bool
}

type prop struct {
	name   string
	schema *node
}

var (
	schemaTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}
	constraints = []string{"type", "oneOf", "properties", "required", "additionalProperties", "items", "enum", "const"}
	annotations = []string{"description", "title", "default", "examples"}
	// allowedOn lists the types a type-specific keyword may appear on.
	allowedOn = map[string][]string{
		"properties":           {"object"},
		"required":             {"object"},
		"additionalProperties": {"object"},
		"items":                {"array"},
		"enum":                 {"string", "number", "integer", "boolean", "null"},
		"const":                {"string", "number", "integer", "boolean", "null"},
	}
	oneOfSiblings = []string{"properties", "required", "additionalProperties", "items", "enum", "const"}
)

// Compile parses raw (a JSON Schema) and checks that it stays inside the
// enforced subset; the error lists every violation, as upstream's
// "unsupported JSON schema: <violations joined by "; ">".
func Compile(raw []byte) (*Schema, error) {
	v, err := jsjson.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("unsupported JSON schema: %v", err)
	}
	var violations []string
	root := compile(v, "schema", &violations)
	if len(violations) > 0 {
		return nil, errors.New("unsupported JSON schema: " + strings.Join(violations, "; "))
	}
	return &Schema{root: root}, nil
}

func compile(v *jsjson.Value, path string, out *[]string) *node {
	if v.Kind != jsjson.Object {
		*out = append(*out, path+" must be a schema object")
		return nil
	}
	n := &node{}
	for _, m := range v.Members {
		k := m.KeyString()
		switch {
		case slices.Contains(constraints, k):
		case slices.Contains(annotations, k):
			if (k == "description" || k == "title") && m.Value.Kind != jsjson.String {
				*out = append(*out, fmt.Sprintf("%s.%s must be a string", path, k))
			}
		default:
			*out = append(*out, fmt.Sprintf("%s.%s is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)", path, k))
		}
	}
	typ, oneOf := v.Get("type"), v.Get("oneOf")
	switch {
	case typ != nil && oneOf != nil:
		*out = append(*out, path+" cannot declare both type and oneOf")
		return n
	case typ == nil && oneOf == nil:
		for _, k := range oneOfSiblings {
			if v.Get(k) != nil {
				*out = append(*out, fmt.Sprintf("%s.%s requires type or oneOf", path, k))
			}
		}
		n.annotation = true
		return n
	case oneOf != nil:
		if oneOf.Kind != jsjson.Array || len(oneOf.Elems) < 2 {
			*out = append(*out, path+".oneOf must be an array of at least two schemas")
		} else {
			for i, b := range oneOf.Elems {
				n.oneOf = append(n.oneOf, compile(b, fmt.Sprintf("%s.oneOf[%d]", path, i), out))
			}
		}
		for _, k := range oneOfSiblings {
			if v.Get(k) != nil {
				*out = append(*out, fmt.Sprintf("%s.%s is not supported beside oneOf", path, k))
			}
		}
		return n
	}
	if typ.Kind != jsjson.String || !slices.Contains(schemaTypes, typ.Str()) {
		if typ.Kind == jsjson.Array {
			*out = append(*out, path+".type must be a single type string (type arrays are not supported)")
		} else {
			*out = append(*out, path+".type must be one of "+strings.Join(schemaTypes, "/"))
		}
		return n
	}
	n.typ = typ.Str()
	for _, k := range []string{"properties", "required", "additionalProperties", "items", "enum", "const"} {
		if v.Get(k) != nil && !slices.Contains(allowedOn[k], n.typ) {
			*out = append(*out, fmt.Sprintf("%s.%s is not supported on type %q", path, k, n.typ))
		}
	}
	switch n.typ {
	case "object":
		compileObject(v, n, path, out)
	case "array":
		if it := v.Get("items"); it != nil {
			n.hasItems, n.items = true, compile(it, path+".items", out)
		}
	default:
		compileScalar(v, n, path, out)
	}
	return n
}

func compileObject(v *jsjson.Value, n *node, path string, out *[]string) {
	n.declared = map[string]bool{}
	if ps := v.Get("properties"); ps != nil {
		if ps.Kind != jsjson.Object {
			*out = append(*out, path+".properties must be an object of schemas")
		} else {
			for _, m := range ps.Members {
				k := m.KeyString()
				n.declared[k] = true
				n.props = append(n.props, prop{name: k, schema: compile(m.Value, path+".properties."+k, out)})
			}
		}
	}
	if rq := v.Get("required"); rq != nil {
		ok := rq.Kind == jsjson.Array
		for _, e := range rq.Elems {
			ok = ok && e.Kind == jsjson.String
		}
		if !ok {
			*out = append(*out, path+".required must be an array of strings")
		} else {
			for _, e := range rq.Elems {
				if !n.declared[e.Str()] {
					*out = append(*out, fmt.Sprintf("%s.required names %q which is not in properties", path, e.Str()))
				}
				n.required = append(n.required, e.Str())
			}
		}
	}
	if ap := v.Get("additionalProperties"); ap != nil {
		if ap.Kind != jsjson.Bool {
			*out = append(*out, path+".additionalProperties must be a boolean")
		} else {
			n.closed = !ap.Bool
		}
	}
}

func compileScalar(v *jsjson.Value, n *node, path string, out *[]string) {
	if e := v.Get("enum"); e != nil {
		ok := e.Kind == jsjson.Array && len(e.Elems) > 0
		for _, x := range e.Elems {
			ok = ok && scalarMatches(n.typ, x)
		}
		if !ok {
			*out = append(*out, fmt.Sprintf("%s.enum must be a non-empty array of %s values", path, n.typ))
		} else {
			n.hasEnum, n.enum = true, e
		}
	}
	if c := v.Get("const"); c != nil {
		switch {
		case !scalarMatches(n.typ, c):
			*out = append(*out, fmt.Sprintf("%s.const must be a %s value", path, n.typ))
		case n.hasEnum && !slices.ContainsFunc(n.enum.Elems, func(x *jsjson.Value) bool { return same(x, c) }):
			*out = append(*out, fmt.Sprintf("%s.const must be one of %s.enum when both are declared", path, path))
		default:
			n.hasConst, n.constant = true, c
		}
	}
}

// jsonNumber is a finite JSON number other than negative zero.
func jsonNumber(v *jsjson.Value) bool {
	return v.Kind == jsjson.Number && !math.IsInf(v.Num, 0) && !math.IsNaN(v.Num) && !(v.Num == 0 && math.Signbit(v.Num))
}

func scalarMatches(typ string, v *jsjson.Value) bool {
	switch typ {
	case "string":
		return v.Kind == jsjson.String
	case "number":
		return jsonNumber(v)
	case "integer":
		return jsonNumber(v) && v.Num == math.Trunc(v.Num)
	case "boolean":
		return v.Kind == jsjson.Bool
	case "null":
		return v.Kind == jsjson.Null
	}
	return false
}

// scalarNoun names what a value of a scalar type is, for a violation
// ("must be a string"); number has its own two violations.
var scalarNoun = map[string]string{"string": "a string", "integer": "an integer", "boolean": "a boolean", "null": "null"}

// same is JavaScript's SameValueZero on scalars (Array.prototype.includes).
func same(a, b *jsjson.Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case jsjson.String:
		return slices.Equal(a.Units, b.Units)
	case jsjson.Number:
		return a.Num == b.Num
	case jsjson.Bool:
		return a.Bool == b.Bool
	case jsjson.Null:
		return true
	}
	return false
}

// Validate checks the arguments (JSON text) and returns every violation in
// walk order; nil means valid. Text that is not JSON is one violation.
func (s *Schema) Validate(args []byte) []string { return s.ValidateAt(args, "") }

// ValidateAt is Validate with the arguments named root in the violations
// ("value" gives "value.key"; "" is `"arguments"` and "key").
func (s *Schema) ValidateAt(args []byte, root string) []string {
	v, err := jsjson.Parse(args)
	if err != nil {
		return []string{`"arguments" must be a lossless JSON value`}
	}
	return check(s.root, v, root)
}

func label(path string) string {
	if path == "" {
		return `"arguments"`
	}
	return `"` + path + `"`
}

func child(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func check(n *node, v *jsjson.Value, path string) []string {
	if n == nil || n.annotation {
		return nil
	}
	if n.oneOf != nil {
		matched := 0
		for _, b := range n.oneOf {
			if len(check(b, v, path)) == 0 {
				matched++
			}
		}
		if matched == 1 {
			return nil
		}
		return []string{fmt.Sprintf("%s must match exactly one oneOf branch (matched %d)", label(path), matched)}
	}
	switch n.typ {
	case "object":
		return checkObject(n, v, path)
	case "array":
		if v.Kind != jsjson.Array {
			return []string{label(path) + " must be an array"}
		}
		var out []string
		if n.hasItems {
			for i, e := range v.Elems {
				out = append(out, check(n.items, e, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
		return out
	case "number":
		if v.Kind != jsjson.Number {
			return []string{label(path) + " must be a number"}
		}
		if !jsonNumber(v) {
			return []string{label(path) + " must be a finite JSON number"}
		}
	case "string", "integer", "boolean", "null":
		if !scalarMatches(n.typ, v) {
			return []string{label(path) + " must be " + scalarNoun[n.typ]}
		}
	}
	if n.hasEnum && !slices.ContainsFunc(n.enum.Elems, func(x *jsjson.Value) bool { return same(x, v) }) {
		return []string{label(path) + " must be one of " + jsjson.Stringify(n.enum)}
	}
	if n.hasConst && !same(n.constant, v) {
		return []string{label(path) + " must be " + jsjson.Stringify(n.constant)}
	}
	return nil
}

func checkObject(n *node, v *jsjson.Value, path string) []string {
	if v.Kind != jsjson.Object {
		return []string{label(path) + " must be an object"}
	}
	var out []string
	for _, k := range n.required {
		if v.Get(k) == nil {
			out = append(out, fmt.Sprintf("missing required property \"%s\"", child(path, k)))
		}
	}
	for _, p := range n.props {
		if x := v.Get(p.name); x != nil {
			out = append(out, check(p.schema, x, child(path, p.name))...)
		}
	}
	if n.closed {
		for _, m := range v.Members {
			if k := m.KeyString(); !n.declared[k] {
				out = append(out, fmt.Sprintf("%s is not a declared property (additionalProperties: false)", label(child(path, k))))
			}
		}
	}
	return out
}
