package jsjson

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JavaScript type of a parsed value.
type Kind uint8

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
	// Num is the value of a number (±Inf when the literal overflows, as
	// JSON.parse reads it).
	Num float64
	// Units are the UTF-16 code units of a string (a lone surrogate kept);
	// [Value.Str] gives valid UTF-8.
	Units []uint16
	// Elems are the elements of an array.
	Elems []*Value
	// Members are the members of an object in JavaScript's own-key order:
	// array-index keys ascending, then the others in first-insertion order.
	Members []Member
	// Offset is the byte offset of the value in the parsed text.
	Offset int
}

// Member is one object member.
type Member struct {
	// Key holds the key's UTF-16 code units.
	Key []uint16
	// Value is the member's value.
	Value *Value
}

// Str returns a string value as valid UTF-8 (a lone surrogate becomes
// U+FFFD), or "" for any other kind.
func (v *Value) Str() string {
	if v == nil || v.Kind != String {
		return ""
	}
	return string(utf16.Decode(v.Units))
}

// HasLoneSurrogate reports a string value holding an unpaired surrogate,
// which a Go string cannot carry as text.
func (v *Value) HasLoneSurrogate() bool {
	if v == nil || v.Kind != String {
		return false
	}
	for i := 0; i < len(v.Units); i++ {
		c := v.Units[i]
		switch {
		case c >= 0xd800 && c < 0xdc00 && i+1 < len(v.Units) && v.Units[i+1] >= 0xdc00 && v.Units[i+1] <= 0xdfff:
			i++
		case utf16.IsSurrogate(rune(c)):
			return true
		}
	}
	return false
}

// KeyString returns the key as a Go string (a lone surrogate becomes U+FFFD).
func (m Member) KeyString() string { return string(utf16.Decode(m.Key)) }

// Get returns an object's member named key, or nil when v is not an object
// or has no such key.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for _, m := range v.Members {
		if m.KeyString() == key {
			return m.Value
		}
	}
	return nil
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

// MaxDepth bounds the nesting [Parse] accepts.
const MaxDepth = 100000

// Parse parses data as JSON.parse does: strict JSON (whitespace is space,
// tab, CR and LF only; a byte order mark is an error), a repeated key keeps
// its first place and takes its last value, a number too large for a double
// is ±Inf, a byte that is not UTF-8 reads as U+FFFD (as Node decodes a file
// or a stream). A failure is a *[SyntaxError]. It is iterative: nesting up
// to [MaxDepth] costs no stack.
func Parse(data []byte) (*Value, error) {
	p := &parser{data: data}
	v := p.parse()
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

type parser struct {
	data []byte
	pos  int
	err  *SyntaxError
}

// frame is an open container: key is the pending member key of an object,
// index the position of each key among its members.
type frame struct {
	v     *Value
	key   []uint16
	index map[string]int
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

func (p *parser) at(c byte) bool { return p.pos < len(p.data) && p.data[p.pos] == c }

// parse reads one value with an explicit stack of open containers.
func (p *parser) parse() *Value {
	var stack []*frame
	var root *Value
	for {
		// A value is expected: the root, an element or a member's value.
		p.ws()
		v := p.value(len(stack))
		if p.err != nil {
			return nil
		}
		if len(stack) == 0 {
			root = v
		} else {
			stack[len(stack)-1].add(v)
		}
		if v.Kind == Array || v.Kind == Object {
			f := &frame{v: v}
			if v.Kind == Object {
				f.index = map[string]int{}
			}
			stack = append(stack, f)
			p.ws()
			switch {
			case v.Kind == Array && p.at(']'), v.Kind == Object && p.at('}'):
				p.pos++
				stack = stack[:len(stack)-1]
			case v.Kind == Object:
				if !p.key(f) {
					return nil
				}
				continue
			default:
				continue
			}
		}
		// A value is complete: a separator continues its container, a
		// closing bracket ends it (and may complete the one around it).
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			p.ws()
			if p.at(',') {
				p.pos++
				if f.v.Kind == Object && !p.key(f) {
					return nil
				}
				break
			}
			if f.v.Kind == Array {
				if !p.at(']') {
					p.fail("expected ',' or ']' after array element")
					return nil
				}
			} else if !p.at('}') {
				p.fail("expected ',' or '}' after property value")
				return nil
			} else {
				orderKeys(f.v)
			}
			p.pos++
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return root
		}
	}
}

// value reads a scalar, or opens a container (its elements follow).
func (p *parser) value(depth int) *Value {
	if p.pos >= len(p.data) {
		p.fail("unexpected end of JSON input")
		return nil
	}
	v := &Value{Offset: p.pos}
	switch c := p.data[p.pos]; {
	case c == '{' || c == '[':
		p.pos++
		if depth >= MaxDepth {
			p.fail("nesting too deep")
			return nil
		}
		v.Kind = Object
		if c == '[' {
			v.Kind, v.Elems = Array, []*Value{}
		}
	case c == '"':
		v.Kind, v.Units = String, p.str()
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
	if strings.HasPrefix(string(p.data[p.pos:min(len(p.data), p.pos+len(word))]), word) {
		p.pos += len(word)
		return true
	}
	return false
}

// key reads an object's next key and its colon.
func (p *parser) key(f *frame) bool {
	p.ws()
	if !p.at('"') {
		p.fail("expected property name or '}'")
		return false
	}
	k := p.str()
	if p.err != nil {
		return false
	}
	p.ws()
	if !p.at(':') {
		p.fail("expected ':' after property name")
		return false
	}
	p.pos++
	f.key = k
	return true
}

// add puts a complete value into the container: an element, or the pending
// key's member (a repeated key keeps its first place, takes the last value).
func (f *frame) add(v *Value) {
	if f.v.Kind == Array {
		f.v.Elems = append(f.v.Elems, v)
		return
	}
	k := unitsKey(f.key)
	if i, dup := f.index[k]; dup {
		f.v.Members[i].Value = v
	} else {
		f.index[k] = len(f.v.Members)
		f.v.Members = append(f.v.Members, Member{Key: f.key, Value: v})
	}
	f.key = nil
}

// unitsKey is a map key for UTF-16 code units (two bytes each).
func unitsKey(u []uint16) string {
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c>>8), byte(c)
	}
	return string(b)
}

// orderKeys puts an object's members in JavaScript's own-key order:
// array-index keys (canonical integers below 2³²−1) first, ascending, then
// the others in insertion order.
func orderKeys(v *Value) {
	slices.SortStableFunc(v.Members, func(a, b Member) int {
		ia, aok := arrayIndex(a.Key)
		ib, bok := arrayIndex(b.Key)
		switch {
		case aok && bok:
			return cmp.Compare(ia, ib)
		case aok:
			return -1
		case bok:
			return 1
		}
		return 0
	})
}

// arrayIndex reports a canonical array index ("0", "12"; at most 2³²−2).
func arrayIndex(k []uint16) (uint64, bool) {
	if len(k) == 0 || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	var n uint64
	for _, c := range k {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n < math.MaxUint32
}

// str reads a string literal into UTF-16 code units.
func (p *parser) str() []uint16 {
	p.pos++ // "
	units := []uint16{}
	for {
		if p.pos >= len(p.data) {
			p.fail("unterminated string")
			return nil
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return units
		case c < 0x20:
			p.fail("bad control character in string literal")
			return nil
		case c == '\\':
			if p.pos+1 >= len(p.data) {
				p.fail("bad escaped character")
				return nil
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
					return nil
				}
				n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
				if err != nil || strings.ContainsAny(string(p.data[p.pos:p.pos+4]), "+-") {
					p.fail("bad Unicode escape")
					return nil
				}
				units = append(units, uint16(n))
				p.pos += 4
			default:
				p.pos--
				p.fail("bad escaped character")
				return nil
			}
		case c < utf8.RuneSelf:
			units = append(units, uint16(c))
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			p.pos += size
			units = utf16.AppendRune(units, r) // a byte that is not UTF-8 reads as U+FFFD
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
	case p.at('0'):
		p.pos++
	case digits() == 0:
		p.fail("no number after minus sign")
		return 0
	}
	if p.at('.') {
		p.pos++
		if digits() == 0 {
			p.fail("unterminated fractional number")
			return 0
		}
	}
	if p.at('e') || p.at('E') {
		p.pos++
		if p.at('+') || p.at('-') {
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

// SortedKeys returns a copy of v whose objects, at every depth, hold their
// members as JavaScript builds them from Object.keys(o).sort(): keys sorted
// by UTF-16 code units, then put in own-key order (array-index keys first,
// ascending), which is what JSON.stringify then writes.
func SortedKeys(v *Value) *Value {
	if v == nil {
		return nil
	}
	out := *v
	switch v.Kind {
	case Array:
		out.Elems = make([]*Value, len(v.Elems))
		for i, e := range v.Elems {
			out.Elems[i] = SortedKeys(e)
		}
	case Object:
		out.Members = make([]Member, len(v.Members))
		for i, m := range v.Members {
			out.Members[i] = Member{Key: m.Key, Value: SortedKeys(m.Value)}
		}
		slices.SortStableFunc(out.Members, func(a, b Member) int { return slices.Compare(a.Key, b.Key) })
		orderKeys(&out)
	}
	return &out
}
