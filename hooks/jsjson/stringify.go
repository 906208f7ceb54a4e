package jsjson

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Stringify writes v as JSON.stringify(v) does (no spaces).
func Stringify(v *Value) string { return StringifyIndent(v, "") }

// StringifyIndent writes v as JSON.stringify(v, null, indent) does: each
// element of a non-empty array or object on its own line, indented one more
// indent per level, ": " after a key; "[]" and "{}" for empty ones. An empty
// indent is [Stringify].
func StringifyIndent(v *Value, indent string) string {
	var b strings.Builder
	write(&b, v, indent, "\n")
	return b.String()
}

// write writes v; nl is the newline and indentation of v's own level.
func write(b *strings.Builder, v *Value, indent, nl string) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Number:
		b.WriteString(FormatNumber(v.Num))
	case String:
		b.WriteString(Quote(v.Str))
	case Array:
		b.WriteByte('[')
		for i, it := range v.Items {
			sep(b, i, indent, nl)
			write(b, it, indent, nl+indent)
		}
		closing(b, len(v.Items), indent, nl, ']')
	case Object:
		b.WriteByte('{')
		keys := v.Keys()
		for i, k := range keys {
			sep(b, i, indent, nl)
			b.WriteString(Quote(k))
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			write(b, v.fields[k], indent, nl+indent)
		}
		closing(b, len(keys), indent, nl, '}')
	}
}

// sep starts element i of a container: a comma after the first, and with
// an indent the element's own line.
func sep(b *strings.Builder, i int, indent, nl string) {
	if i > 0 {
		b.WriteByte(',')
	}
	if indent != "" {
		b.WriteString(nl + indent)
	}
}

// closing ends a container of n elements (on its own line when indented and
// not empty).
func closing(b *strings.Builder, n int, indent, nl string, c byte) {
	if indent != "" && n > 0 {
		b.WriteString(nl)
	}
	b.WriteByte(c)
}

const hexDigits = "0123456789abcdef"

// Quote writes s (UTF-8, or WTF-8 with lone surrogates) as a JSON string
// literal the way JSON.stringify does. Invalid bytes read as U+FFFD.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if c < 0x20 {
					b.WriteString(`\u00`)
					b.WriteByte(hexDigits[c>>4])
					b.WriteByte(hexDigits[c&0xF])
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		if u, ok := surrogateAt(s, i); ok {
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(u>>shift)&0xF])
			}
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // RuneError for invalid bytes
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// surrogateAt reports a WTF-8 encoded surrogate (ED A0..BF xx) at s[i].
func surrogateAt(s string, i int) (uint16, bool) {
	if i+2 >= len(s) || s[i] != 0xED || s[i+1] < 0xA0 || s[i+1] > 0xBF || s[i+2]&0xC0 != 0x80 {
		return 0, false
	}
	return 0xD000 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F), true
}

// FormatNumber writes f as JavaScript's Number.prototype.toString does;
// a non-finite number is "null", as JSON.stringify writes it.
func FormatNumber(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "null"
	}
	if f == 0 {
		return "0" // also -0
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest round-trip digits d1.d2…dk and exponent, as both engines use.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1
	var out string
	switch {
	case k <= n && n <= 21:
		out = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		out = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	default:
		es := "+"
		if n-1 < 0 {
			es = "-"
		}
		ev := strconv.Itoa(abs(n - 1))
		if k == 1 {
			out = digits + "e" + es + ev
		} else {
			out = digits[:1] + "." + digits[1:] + "e" + es + ev
		}
	}
	return sign + out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
