package spill

import (
	"encoding/binary"
	"unicode/utf8"
)

// UTF16Len returns the length of s in UTF-16 code units, as a JavaScript
// string would report it (an invalid byte counts as one U+FFFD).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// EstimateTokens is the token estimate of one text block: ceil(UTF-16 length / 4) + 4.
func EstimateTokens(s string) int { return tokensForUnits(UTF16Len(s)) }

func tokensForUnits(u int) int { return (u+3)/4 + 4 }

// maxUnitsFor returns the largest UTF-16 length whose block costs at most tokens
// (-1 when not even an empty block fits).
func maxUnitsFor(tokens int) int {
	if tokens < 4 {
		return -1
	}
	return (tokens - 4) * 4
}

// prefixUnits returns the longest prefix of s with at most max UTF-16 units,
// never splitting a code point (so never a surrogate pair).
func prefixUnits(s string, max int) string {
	if max <= 0 {
		return ""
	}
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > max {
			return s[:i]
		}
		n += w
		i += size
	}
	return s
}

// suffixUnits returns the longest suffix of s with at most max UTF-16 units,
// never splitting a code point.
func suffixUnits(s string, max int) string {
	if max <= 0 {
		return ""
	}
	n := 0
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > max {
			return s[i:]
		}
		n += w
		i -= size
	}
	return s
}

// unitCounter counts UTF-16 units of a byte stream written in chunks,
// carrying an incomplete UTF-8 sequence across chunk boundaries.
type unitCounter struct {
	pending [utf8.UTFMax]byte
	np      int
	units   int64
}

const asciiMask = 0x8080808080808080

func (c *unitCounter) write(p []byte) {
	if c.np > 0 {
		// the pending bytes are a valid but incomplete prefix of one rune:
		// decode them together with the start of p, as one text would
		var tmp [2 * utf8.UTFMax]byte
		n := copy(tmp[:], c.pending[:c.np])
		n += copy(tmp[n:], p[:min(len(p), utf8.UTFMax)])
		buf := tmp[:n]
		if !utf8.FullRune(buf) {
			c.np = copy(c.pending[:], buf)
			return
		}
		i := 0
		for i < c.np {
			r, size := utf8.DecodeRune(buf[i:])
			c.add(r)
			i += size
		}
		p = p[i-c.np:]
		c.np = 0
	}
	i := 0
	for i < len(p) {
		if i+8 <= len(p) && binary.LittleEndian.Uint64(p[i:])&asciiMask == 0 {
			c.units += 8
			i += 8
			continue
		}
		if p[i] < utf8.RuneSelf {
			c.units++
			i++
			continue
		}
		if !utf8.FullRune(p[i:]) {
			c.np = copy(c.pending[:], p[i:])
			return
		}
		r, size := utf8.DecodeRune(p[i:])
		c.add(r)
		i += size
	}
}

func (c *unitCounter) add(r rune) {
	if r >= 0x10000 {
		c.units += 2
	} else {
		c.units++
	}
}

// total returns the units counted, with any incomplete trailing sequence
// counted as one U+FFFD per byte (as a decoder would).
func (c *unitCounter) total() int64 { return c.units + int64(c.np) }
