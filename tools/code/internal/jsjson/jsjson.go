package jsjson

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a [Value].
type Kind uint8

// The six JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is one parsed JSON value.
type Value struct {
	// Kind is the JSON type.
	Kind Kind
	// Bool is the value of a Bool.
	Bool bool
	// Num is the value of a Number.
	Num float64
	// Units are the UTF-16 code units of a String (lone surrogates kept).
	Units []uint16
	// Elems are the elements of an Array.
	Elems []*Value
	// Members are the members of an Object, in source order.
	Members []Member
}

// Member is one object member.
type Member struct {
	// Key holds the key's UTF-16 code units.
	Key []uint16
	// Value is the member's value.
	Value *Value
}

// Str returns the Go string of a String value (a lone surrogate becomes U+FFFD).
func (v *Value) Str() string { return string(utf16.Decode(v.Units)) }

// KeyString returns the key as a Go string.
func (m Member) KeyString() string { return string(utf16.Decode(m.Key)) }

// Get returns the member named key, or nil.
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

// MaxDepth bounds the nesting the parser accepts.
const MaxDepth = 100000

// Parse parses one JSON text (surrounding whitespace allowed). Numbers must
// be finite doubles. It is iterative: nesting up to [MaxDepth] costs no stack.
func Parse(data []byte) (*Value, error) {
	p := &parser{s: data}
	v, err := p.parse()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, p.errf("unexpected data after the value")
	}
	return v, nil
}

type parser struct {
	s []byte
	i int
}

func (p *parser) errf(format string, a ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.i, fmt.Sprintf(format, a...))
}

func (p *parser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// frame is an open container; key is the pending member key of an object.
type frame struct {
	v   *Value
	key []uint16
}

func (p *parser) parse() (*Value, error) {
	var stack []*frame
	var root *Value
	for {
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.errf("unexpected end of input")
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		// An object expects a key (or '}') before each value.
		if top != nil && top.v.Kind == Object && top.key == nil {
			if p.s[p.i] == '}' && len(top.v.Members) == 0 {
				p.i++
				stack = stack[:len(stack)-1]
				if done, err := p.after(&stack); err != nil || done {
					return root, err
				}
				continue
			}
			if p.s[p.i] != '"' {
				return nil, p.errf("expected a string key")
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errf("expected ':'")
			}
			p.i++
			top.key = k
			continue
		}
		if top != nil && top.v.Kind == Array && len(top.v.Elems) == 0 && p.s[p.i] == ']' {
			p.i++
			stack = stack[:len(stack)-1]
			if done, err := p.after(&stack); err != nil || done {
				return root, err
			}
			continue
		}
		v := &Value{}
		open := false
		switch c := p.s[p.i]; {
		case c == '{' || c == '[':
			if len(stack) >= MaxDepth {
				return nil, p.errf("nesting deeper than %d", MaxDepth)
			}
			p.i++
			v.Kind, open = Object, true
			if c == '[' {
				v.Kind = Array
			}
		case c == '"':
			u, err := p.str()
			if err != nil {
				return nil, err
			}
			v.Kind, v.Units = String, u
		case c == 't' || c == 'f' || c == 'n':
			lit := p.s[p.i:min(len(p.s), p.i+5)]
			switch {
			case strings.HasPrefix(string(lit), "true"):
				v.Kind, v.Bool = Bool, true
				p.i += 4
			case strings.HasPrefix(string(lit), "false"):
				v.Kind = Bool
				p.i += 5
			case strings.HasPrefix(string(lit), "null"):
				v.Kind = Null
				p.i += 4
			default:
				return nil, p.errf("invalid literal")
			}
		default:
			n, err := p.num()
			if err != nil {
				return nil, err
			}
			v.Kind, v.Num = Number, n
		}
		if top == nil {
			root = v
		} else if top.v.Kind == Object {
			top.v.setMember(top.key, v)
			top.key = nil
		} else {
			top.v.Elems = append(top.v.Elems, v)
		}
		if open {
			stack = append(stack, &frame{v: v})
			continue
		}
		if done, err := p.after(&stack); err != nil || done {
			return root, err
		}
	}
}

// after consumes the separator after a complete value: ',' continues the
// container, a closing bracket pops it (repeatedly). done reports that the
// root value is complete.
func (p *parser) after(stack *[]*frame) (done bool, err error) {
	for {
		if len(*stack) == 0 {
			return true, nil
		}
		top := (*stack)[len(*stack)-1]
		p.ws()
		if p.i >= len(p.s) {
			return false, p.errf("unexpected end of input")
		}
		closer := byte(']')
		if top.v.Kind == Object {
			closer = '}'
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			return false, nil
		case closer:
			p.i++
			if top.v.Kind == Object {
				top.v.orderKeys()
			}
			*stack = (*stack)[:len(*stack)-1]
		default:
			return false, p.errf("expected ',' or '%c'", closer)
		}
	}
}

// setMember adds a member as JSON.parse does: a repeated key keeps its first
// position and takes the last value.
func (v *Value) setMember(key []uint16, val *Value) {
	for i := range v.Members {
		if slices.Equal(v.Members[i].Key, key) {
			v.Members[i].Value = val
			return
		}
	}
	v.Members = append(v.Members, Member{Key: key, Value: val})
}

// orderKeys puts members in JavaScript's own-key order: array-index keys
// (canonical integers below 2^32-1) first, ascending, then the others in
// insertion order.
func (v *Value) orderKeys() {
	idx := func(k []uint16) (uint32, bool) {
		if len(k) == 0 || len(k) > 10 || (k[0] == '0' && len(k) > 1) {
			return 0, false
		}
		var n uint64
		for _, c := range k {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + uint64(c-'0')
		}
		return uint32(n), n < math.MaxUint32
	}
	slices.SortStableFunc(v.Members, func(a, b Member) int {
		ia, aok := idx(a.Key)
		ib, bok := idx(b.Key)
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

func (p *parser) num() (float64, error) {
	start := p.i
	s := p.s
	if p.i < len(s) && s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(s) && s[p.i] >= '0' && s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(s) && s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		p.i = start
		return 0, p.errf("invalid value")
	}
	if p.i < len(s) && s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return 0, p.errf("invalid number")
		}
	}
	if p.i < len(s) && (s[p.i] == 'e' || s[p.i] == 'E') {
		p.i++
		if p.i < len(s) && (s[p.i] == '+' || s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return 0, p.errf("invalid number")
		}
	}
	f, err := strconv.ParseFloat(string(s[start:p.i]), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, p.errf("number %s is not a finite double", s[start:p.i])
	}
	return f, nil
}

// str parses a string token into UTF-16 code units. Raw bytes must be valid
// UTF-8 and no control character may appear unescaped.
func (p *parser) str() ([]uint16, error) {
	p.i++ // opening quote
	var out []uint16
	for {
		if p.i >= len(p.s) {
			return nil, p.errf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			if out == nil {
				out = []uint16{}
			}
			return out, nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return nil, p.errf("unterminated escape")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, uint16(e))
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				if p.i+4 > len(p.s) {
					return nil, p.errf("short \\u escape")
				}
				n, err := strconv.ParseUint(string(p.s[p.i:p.i+4]), 16, 16)
				if err != nil {
					return nil, p.errf("bad \\u escape")
				}
				out = append(out, uint16(n))
				p.i += 4
			default:
				return nil, p.errf("bad escape \\%c", e)
			}
		case c < 0x20:
			return nil, p.errf("control character in string")
		case c < utf8.RuneSelf:
			out = append(out, uint16(c))
			p.i++
		default:
			r, size := utf8.DecodeRune(p.s[p.i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, p.errf("invalid UTF-8 in string")
			}
			out = utf16.AppendRune(out, r)
			p.i += size
		}
	}
}

// ErrNotJSON is returned by [Compact] for a value it cannot write.
var ErrNotJSON = errors.New("jsjson: not a JSON value")

// QuoteUnits is JSON.stringify of a string given as UTF-16 code units.
func QuoteUnits(u []uint16) string {
	var b strings.Builder
	b.Grow(len(u) + 2)
	writeQuoted(&b, u)
	return b.String()
}

// Quote is JSON.stringify of a Go string.
func Quote(s string) string { return QuoteUnits(utf16.Encode([]rune(s))) }

const hexDigits = "0123456789abcdef"

func writeQuoted(b *strings.Builder, u []uint16) {
	b.WriteByte('"')
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		case utf16.IsSurrogate(rune(c)):
			if c < 0xdc00 && i+1 < len(u) && u[i+1] >= 0xdc00 && u[i+1] <= 0xdfff {
				b.WriteRune(utf16.DecodeRune(rune(c), rune(u[i+1])))
				i++
				continue
			}
			b.WriteString(`\u`)
			for s := 12; s >= 0; s -= 4 {
				b.WriteByte(hexDigits[(c>>s)&0xf])
			}
		default:
			b.WriteRune(rune(c))
		}
	}
	b.WriteByte('"')
}

// QuotedSize is len(QuoteUnits(u)) without building the text.
func QuotedSize(u []uint16) int {
	n := 2
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20:
			n += 6
		case utf16.IsSurrogate(rune(c)):
			if c < 0xdc00 && i+1 < len(u) && u[i+1] >= 0xdc00 && u[i+1] <= 0xdfff {
				n += 4
				i++
			} else {
				n += 6
			}
		case c < 0x80:
			n++
		case c < 0x800:
			n += 2
		default:
			n += 3
		}
	}
	return n
}

// FormatNumber is JavaScript's Number.prototype.toString (radix 10) of a finite f:
// the shortest round-trip digits, fixed notation for decimal exponents in
// (-7, 21], else d[.ddd]e±x; -0 is "0".
func FormatNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if math.IsNaN(f) {
		return "NaN"
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return "Infinity"
		}
		return "-Infinity"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddddde±xx
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k := len(digits)
	n := x + 1 // position of the decimal point
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	es := "+"
	if n-1 < 0 {
		es = "-"
	}
	ex := strconv.Itoa(abs(n - 1))
	if k == 1 {
		return sign + digits + "e" + es + ex
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + es + ex
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// Compact is JSON.stringify(v): no whitespace, members in order.
func Compact(v *Value) string { return Indent(v, 0) }

// Indent is JSON.stringify(v, null, 2) for the containers above depth
// prettyDepth (the root is depth 0) and compact text from that depth down.
// It writes with an explicit stack.
func Indent(root *Value, prettyDepth int) string {
	var b strings.Builder
	type item struct {
		v     *Value
		depth int
		lit   string // when v is nil: a literal piece
	}
	stack := []item{{v: root}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		v := it.v
		if v == nil {
			b.WriteString(it.lit)
			continue
		}
		n := len(v.Elems)
		open, end := "[", "]"
		switch v.Kind {
		case Array:
		case Object:
			n, open, end = len(v.Members), "{", "}"
		default:
			b.WriteString(Scalar(v))
			continue
		}
		if n == 0 {
			b.WriteString(open + end)
			continue
		}
		inner, colon, closing := "", ":", end
		if it.depth < prettyDepth {
			inner, colon = "\n"+strings.Repeat("  ", it.depth+1), ": "
			closing = "\n" + strings.Repeat("  ", it.depth) + end
		}
		b.WriteString(open)
		stack = append(stack, item{lit: closing})
		for i := n - 1; i >= 0; i-- {
			sep := inner
			if i > 0 {
				sep = "," + inner
			}
			if v.Kind == Array {
				stack = append(stack, item{v: v.Elems[i], depth: it.depth + 1}, item{lit: sep})
			} else {
				m := v.Members[i]
				stack = append(stack, item{v: m.Value, depth: it.depth + 1}, item{lit: sep + QuoteUnits(m.Key) + colon})
			}
		}
	}
	return b.String()
}

// Scalar is JSON.stringify of a scalar value (null, boolean, number, string).
func Scalar(v *Value) string {
	switch v.Kind {
	case Null:
		return "null"
	case Bool:
		if v.Bool {
			return "true"
		}
		return "false"
	case Number:
		return FormatNumber(v.Num)
	case String:
		return QuoteUnits(v.Units)
	}
	return ""
}
