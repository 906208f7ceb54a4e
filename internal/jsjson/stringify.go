package jsjson

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Stringify writes v as JSON.stringify(v) does (no whitespace; members in
// their order; a non-finite number is null).
func Stringify(v *Value) string { return StringifyDepth(v, "", 0) }

// StringifyIndent writes v as JSON.stringify(v, null, indent) does: each
// element of a non-empty array or object on its own line, indented one more
// indent per level, ": " after a key; "[]" and "{}" for empty ones. An empty
// indent is [Stringify].
func StringifyIndent(v *Value, indent string) string {
	return StringifyDepth(v, indent, math.MaxInt)
}

// StringifyDepth is [StringifyIndent] for the containers above depth (the
// root is depth 0) and [Stringify] from that depth down. It writes with an
// explicit stack: nesting costs no Go stack.
func StringifyDepth(root *Value, indent string, depth int) string {
	if indent == "" {
		depth = 0
	}
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
		n, open, end := len(v.Elems), "[", "]"
		switch v.Kind {
		case Array:
		case Object:
			n, open, end = len(v.Members), "{", "}"
		default:
			writeScalar(&b, v)
			continue
		}
		if n == 0 {
			b.WriteString(open + end)
			continue
		}
		inner, colon, closing := "", ":", end
		if it.depth < depth {
			inner, colon = "\n"+strings.Repeat(indent, it.depth+1), ": "
			closing = "\n" + strings.Repeat(indent, it.depth) + end
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

// writeScalar writes null, a boolean, a number (null when not finite) or a
// string as JSON.stringify does.
func writeScalar(b *strings.Builder, v *Value) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Number:
		if math.IsInf(v.Num, 0) || math.IsNaN(v.Num) {
			b.WriteString("null")
		} else {
			b.WriteString(FormatNumber(v.Num))
		}
	case String:
		writeQuoted(b, v.Units)
	}
}

const hexDigits = "0123456789abcdef"

// Quote writes s as a JSON string literal the way JSON.stringify does (no
// HTML escaping, U+2028 and U+2029 raw, control characters as \b \f \n \r
// \t or \u00xx). A byte that is not UTF-8 reads as U+FFFD.
func Quote(s string) string { return QuoteUnits(utf16.Encode([]rune(s))) }

// QuoteUnits is [Quote] of a string given as UTF-16 code units: a lone
// surrogate is written as a lower-case \udxxx escape.
func QuoteUnits(u []uint16) string {
	var b strings.Builder
	b.Grow(len(u) + 2)
	writeQuoted(&b, u)
	return b.String()
}

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

// FormatNumber writes f as JavaScript's Number.prototype.toString (radix
// 10) does: the shortest round-trip digits, fixed notation for decimal
// exponents in (-7, 21], else d[.ddd]e±x; -0 is "0"; NaN, Infinity and
// -Infinity by name (JSON.stringify writes those as null).
func FormatNumber(f float64) string {
	switch {
	case f == 0:
		return "0" // also -0
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
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
	k, n := len(digits), x+1 // n: the position of the decimal point
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
	ex := strconv.Itoa(max(n-1, 1-n))
	if k == 1 {
		return sign + digits + "e" + es + ex
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + es + ex
}
