package jstext

import (
	"strings"
	"unicode/utf8"
)

// Decode is b as TextDecoder("utf-8") decodes it (no byte-order mark is
// dropped here: callers that decode whole files do that): valid sequences
// as they are, and one U+FFFD for each maximal subpart of an ill-formed
// one (a lead byte and the continuation bytes that could still have begun
// a well-formed sequence).
func Decode(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var s strings.Builder
	s.Grow(len(b) + 8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r != utf8.RuneError || size > 1 {
			s.Write(b[:size])
			b = b[size:]
			continue
		}
		s.WriteRune(utf8.RuneError)
		b = b[maximalSubpart(b):]
	}
	return s.String()
}

// maximalSubpart is the length (at least 1) of the ill-formed prefix of b
// that one U+FFFD replaces: the lead byte and each following byte that is
// in the range the well-formed sequences of Unicode's table 3-7 allow there.
func maximalSubpart(b []byte) int {
	lo, hi, need := byte(0x80), byte(0xBF), 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		lo, need = 0xA0, 2
	case c == 0xED:
		hi, need = 0x9F, 2
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		lo, need = 0x90, 3
	case c == 0xF4:
		hi, need = 0x8F, 3
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1 // not a lead byte
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF // only the second byte has a narrower range
	}
	return n
}
