package jsjson

import "strings"

// IsSpace reports whether r is JavaScript's whitespace: what \s matches and
// String.prototype.trim removes (WhiteSpace and LineTerminator: U+FEFF
// included, U+0085 not).
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// Trim is String.prototype.trim.
func Trim(s string) string { return strings.TrimFunc(s, IsSpace) }
