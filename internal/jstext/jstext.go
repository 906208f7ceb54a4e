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

// wellFormed is Unicode's table 3-7 by lead byte: the lead bytes first
// through last, the range lo..hi the second byte must be in (every later
// one is 0x80..0xBF) and how many continuation bytes follow the lead.
var wellFormed = []struct {
	first, last, lo, hi byte
	need                int
}{
	{0xC2, 0xDF, 0x80, 0xBF, 1},
	{0xE0, 0xE0, 0xA0, 0xBF, 2},
	{0xE1, 0xEC, 0x80, 0xBF, 2},
	{0xED, 0xED, 0x80, 0x9F, 2},
	{0xEE, 0xEF, 0x80, 0xBF, 2},
	{0xF0, 0xF0, 0x90, 0xBF, 3},
	{0xF1, 0xF3, 0x80, 0xBF, 3},
	{0xF4, 0xF4, 0x80, 0x8F, 3},
}

// maximalSubpart is the length (at least 1) of the ill-formed prefix of b
// that one U+FFFD replaces: the lead byte and each following byte that is
// in the range the well-formed sequences of wellFormed allow there.
func maximalSubpart(b []byte) int {
	for _, w := range wellFormed {
		if b[0] < w.first || b[0] > w.last {
			continue
		}
		n, lo, hi := 1, w.lo, w.hi
		for ; n <= w.need && n < len(b); n++ {
			if b[n] < lo || b[n] > hi {
				break
			}
			lo, hi = 0x80, 0xBF // only the second byte has a narrower range
		}
		return n
	}
	return 1 // not a lead byte
}
