package jsregex

import (
	"fmt"
	"sort"
	"strings"
)

// span is an inclusive range of UTF-16 code units.
type span struct{ lo, hi uint16 }

// set is a sorted list of disjoint, non-adjacent spans.
type set []span

func newSet(units ...uint16) set {
	var s set
	for _, u := range units {
		s = s.union(set{{u, u}})
	}
	return s
}

// union returns s ∪ t, normalised.
func (s set) union(t set) set {
	all := append(append(set(nil), s...), t...)
	sort.Slice(all, func(i, j int) bool { return all[i].lo < all[j].lo })
	var out set
	for _, r := range all {
		if n := len(out); n > 0 && int(r.lo) <= int(out[n-1].hi)+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// complement returns the units of 0..0xFFFF not in s.
func complement(s set) set {
	var out set
	next := 0
	for _, r := range s {
		if int(r.lo) > next {
			out = append(out, span{uint16(next), r.lo - 1})
		}
		next = int(r.hi) + 1
	}
	if next <= 0xFFFF {
		out = append(out, span{uint16(next), 0xFFFF})
	}
	return out
}

// The sets of \d, \w and \s (WhiteSpace and LineTerminator), as a flagless
// JavaScript RegExp defines them.
var (
	digitSet = set{{'0', '9'}}
	wordSet  = set{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	spaceSet = newSet(0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF).
			union(set{{0x2000, 0x200A}})
)

func classEscape(c uint16) set {
	switch c {
	case 'd':
		return digitSet
	case 'D':
		return complement(digitSet)
	case 'w':
		return wordSet
	case 'W':
		return complement(wordSet)
	case 's':
		return spaceSet
	}
	return complement(spaceSet)
}

// emitUnit writes one code unit as a Go literal.
func emitUnit(u uint16) string { return fmt.Sprintf(`\x{%X}`, unitRune(u)) }

// emitSet writes s as a Go class over the mapped alphabet (surrogate units
// live at U+F0000…U+F07FF, so a span across them is split).
func emitSet(s set) string {
	if len(s) == 0 {
		return `[^\x{0}-\x{10FFFF}]` // matches nothing, like []
	}
	if len(s) == 1 && s[0].lo == s[0].hi {
		return emitUnit(s[0].lo)
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, r := range s {
		for _, part := range splitSurrogates(r) {
			lo, hi := unitRune(part.lo), unitRune(part.hi)
			if lo == hi {
				fmt.Fprintf(&b, `\x{%X}`, lo)
			} else {
				fmt.Fprintf(&b, `\x{%X}-\x{%X}`, lo, hi)
			}
		}
	}
	b.WriteByte(']')
	return b.String()
}

// splitSurrogates cuts a span at the surrogate block boundaries.
func splitSurrogates(r span) []span {
	var out []span
	for _, cut := range []span{{0, 0xD7FF}, {0xD800, 0xDFFF}, {0xE000, 0xFFFF}} {
		lo, hi := max(r.lo, cut.lo), min(r.hi, cut.hi)
		if lo <= hi {
			out = append(out, span{lo, hi})
		}
	}
	return out
}
