package jsjson

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JavaScript type of a parsed value.
type Kind int

// The kinds of JSON values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

// String names the kind as JavaScript's JSON does ("object", "array", ...).
func (k Kind) String() string { return kindNames[k] }

// Value is one parsed JSON value.
type Value struct {
	// Kind says which of the fields below holds the value.
	Kind Kind
	// Bool is the value of a boolean.
	Bool bool
	// Num is the value of a number (±Inf when the literal overflows).
	Num float64
	// Str is the value of a string, in WTF-8 (a lone surrogate is kept as
	// its three-byte sequence); [Value.Text] gives valid UTF-8.
	Str string
	// Items are the elements of an array.
	Items []*Value
	// Offset is the byte offset of the value in the parsed text.
	Offset int

	keys   []string
	fields map[string]*Value
}

// Keys returns an object's keys in JavaScript's enumeration order.
func (v *Value) Keys() []string {
	if v == nil || v.Kind != Object {
		return nil
	}
	ints := make([]string, 0)
	var rest []string
	for _, k := range v.keys {
		if _, ok := arrayIndex(k); ok {
			ints = append(ints, k)
		} else {
			rest = append(rest, k)
		}
	}
	sort.Slice(ints, func(i, j int) bool {
		a, _ := arrayIndex(ints[i])
		b, _ := arrayIndex(ints[j])
		return a < b
	})
	return append(ints, rest...)
}

// Get returns an object's field, or nil when v is not an object or has no
// such key.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	return v.fields[key]
}

// Text returns a string value as valid UTF-8 (a lone surrogate becomes
// U+FFFD), or "" for any other kind.
func (v *Value) Text() string {
	if v == nil || v.Kind != String {
		return ""
	}
	return strings.ToValidUTF8(v.Str, "\uFFFD")
}

// HasLoneSurrogate reports a string value holding an unpaired surrogate,
// which a Go string cannot carry as text.
func (v *Value) HasLoneSurrogate() bool {
	return v != nil && v.Kind == String && !utf8.ValidString(v.Str)
}

// arrayIndex reports a canonical array index ("0", "12"; at most 2³²−2).
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n > math.MaxUint32-1 {
		return 0, false
	}
	return n, true
}

// SyntaxError is a JSON.parse failure.
type SyntaxError struct {
	// Offset is the byte offset; Line and Column are 1-based.
	Offset, Line, Column int
	// Problem says what was expected.
	Problem string
}

// Error says what was expected, with line and column.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s in JSON at line %d column %d", e.Problem, e.Line, e.Column)
}

// LineOf returns the 1-based line and column of a byte offset in data.
func LineOf(data []byte, offset int) (line, column int) {
	offset = min(max(offset, 0), len(data))
	line = 1 + strings.Count(string(data[:offset]), "\n")
	column = offset - strings.LastIndexByte(string(data[:offset]), '\n')
	return line, column
}

// maxDepth bounds nesting, as an engine's stack does.
const maxDepth = 10000

type parser struct {
	data  []byte
	pos   int
	depth int
	err   *SyntaxError
}

// Parse parses data as JSON.parse does (strict JSON; whitespace is space,
// tab, CR and LF only; a byte order mark is an error).
func Parse(data []byte) (*Value, error) {
	p := &parser{data: data}
	p.ws()
	v := p.value()
	if p.err == nil {
		p.ws()
		if p.pos < len(p.data) {
			p.fail("unexpected non-whitespace character after JSON")
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return v, nil
}

func (p *parser) fail(problem string) {
	if p.err == nil {
		l, c := LineOf(p.data, p.pos)
		p.err = &SyntaxError{Offset: p.pos, Line: l, Column: c, Problem: problem}
	}
}

func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() *Value {
	if p.pos >= len(p.data) {
		p.fail("unexpected end of JSON input")
		return nil
	}
	v := &Value{Offset: p.pos}
	switch c := p.data[p.pos]; {
	case c == '{':
		p.object(v)
	case c == '[':
		p.array(v)
	case c == '"':
		v.Kind, v.Str = String, p.str()
	case c == '-' || c >= '0' && c <= '9':
		v.Kind, v.Num = Number, p.number()
	case p.literal("true"):
		v.Kind, v.Bool = Bool, true
	case p.literal("false"):
		v.Kind = Bool
	case p.literal("null"):
	default:
		r, _ := utf8.DecodeRune(p.data[p.pos:])
		p.fail(fmt.Sprintf("unexpected token %q", r))
	}
	return v
}

func (p *parser) literal(word string) bool {
	if strings.HasPrefix(string(p.data[p.pos:]), word) {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *parser) nest() bool {
	p.depth++
	if p.depth > maxDepth {
		p.fail("nesting too deep")
		return false
	}
	return true
}

func (p *parser) object(v *Value) {
	v.Kind, v.fields = Object, map[string]*Value{}
	p.pos++
	if !p.nest() {
		return
	}
	defer func() { p.depth-- }()
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return
	}
	for p.err == nil {
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			p.fail("expected property name or '}'")
			return
		}
		k := p.str()
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			p.fail("expected ':' after property name")
			return
		}
		p.pos++
		p.ws()
		item := p.value()
		if p.err != nil {
			return
		}
		if _, dup := v.fields[k]; !dup {
			v.keys = append(v.keys, k)
		}
		v.fields[k] = item
		p.ws()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return
		}
		p.fail("expected ',' or '}' after property value")
	}
}

func (p *parser) array(v *Value) {
	v.Kind = Array
	v.Items = []*Value{}
	p.pos++
	if !p.nest() {
		return
	}
	defer func() { p.depth-- }()
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return
	}
	for p.err == nil {
		p.ws()
		item := p.value()
		if p.err != nil {
			return
		}
		v.Items = append(v.Items, item)
		p.ws()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return
		}
		p.fail("expected ',' or ']' after array element")
	}
}

// str reads a string literal into WTF-8.
func (p *parser) str() string {
	p.pos++ // "
	var units []uint16
	for {
		if p.pos >= len(p.data) {
			p.fail("unterminated string")
			return ""
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return wtf8(units)
		case c < 0x20:
			p.fail("bad control character in string literal")
			return ""
		case c == '\\':
			if p.pos+1 >= len(p.data) {
				p.fail("bad escaped character")
				return ""
			}
			e := p.data[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				units = append(units, uint16(e))
			case 'b':
				units = append(units, '\b')
			case 'f':
				units = append(units, '\f')
			case 'n':
				units = append(units, '\n')
			case 'r':
				units = append(units, '\r')
			case 't':
				units = append(units, '\t')
			case 'u':
				if p.pos+4 > len(p.data) {
					p.fail("bad Unicode escape")
					return ""
				}
				n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
				if err != nil || strings.ContainsAny(string(p.data[p.pos:p.pos+4]), "+-") {
					p.fail("bad Unicode escape")
					return ""
				}
				units = append(units, uint16(n))
				p.pos += 4
			default:
				p.pos -= 1
				p.fail("bad escaped character")
				return ""
			}
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			p.pos += size
			units = utf16.AppendRune(units, r) // invalid UTF-8 reads as U+FFFD, as Node decodes files
		}
	}
}

func (p *parser) number() float64 {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case digits() == 0:
		p.fail("no number after minus sign")
		return 0
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			p.fail("unterminated fractional number")
			return 0
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			p.fail("exponent part is missing a number")
			return 0
		}
	}
	f, _ := strconv.ParseFloat(string(p.data[start:p.pos]), 64) // overflow: ±Inf, like JavaScript
	return f
}

// wtf8 encodes UTF-16 units, keeping a lone surrogate as its three bytes.
func wtf8(units []uint16) string {
	var b []byte
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		if utf16.IsSurrogate(u) && u < 0xDC00 && i+1 < len(units) {
			if r := utf16.DecodeRune(u, rune(units[i+1])); r != utf8.RuneError {
				b = utf8.AppendRune(b, r)
				i++
				continue
			}
		}
		if utf16.IsSurrogate(u) {
			b = append(b, byte(0xE0|u>>12), byte(0x80|(u>>6)&0x3F), byte(0x80|u&0x3F))
			continue
		}
		b = utf8.AppendRune(b, u)
	}
	return string(b)
}
