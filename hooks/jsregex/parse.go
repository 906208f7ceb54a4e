package jsregex

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
)

// maxRepeat is Go's limit on a repetition count.
const maxRepeat = 1000

// parser reads the ECMAScript Pattern grammar (non-Unicode mode, Annex B)
// over UTF-16 code units and writes the Go program.
type parser struct {
	pattern string
	src     []uint16
	pos     int
	groups  int             // capturing groups in the whole pattern (prescan)
	named   bool            // the pattern has a named group (changes \k)
	names   map[string]bool // group names (prescan; forward references are legal)
	seen    map[string]bool // group names met so far
	out     strings.Builder

	err         *SyntaxError
	unsupported *UnsupportedError
}

func (p *parser) fail(problem string) {
	if p.err == nil {
		p.err = &SyntaxError{Pattern: p.pattern, Offset: p.pos, Problem: problem}
	}
	p.pos = len(p.src)
}

func (p *parser) unsupportedAt(at int, feature string) {
	if p.unsupported == nil {
		p.unsupported = &UnsupportedError{Pattern: p.pattern, Offset: at, Feature: feature}
	}
}

func (p *parser) more() bool { return p.err == nil && p.pos < len(p.src) }

// peek returns the unit at pos+k, or 0 past the end (0 is never syntax).
func (p *parser) peek(k int) uint16 {
	if p.pos+k < len(p.src) && p.err == nil {
		return p.src[p.pos+k]
	}
	return 0
}

// prescan counts capturing groups and collects group names, as engines do
// before parsing (a backreference may point forward).
func (p *parser) prescan() {
	p.names, p.seen = map[string]bool{}, map[string]bool{}
	inClass := false
	for i := 0; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(':
			if i+1 < len(p.src) && p.src[i+1] == '?' {
				if i+3 < len(p.src) && p.src[i+2] == '<' && p.src[i+3] != '=' && p.src[i+3] != '!' {
					p.groups++
					p.named = true
					j := i + 3
					for j < len(p.src) && p.src[j] != '>' {
						j++
					}
					p.names[string(utf16.Decode(p.src[i+3:j]))] = true
				}
				continue
			}
			p.groups++
		}
	}
}

// disjunction := alternative ('|' alternative)*; stops before ')' or the end.
func (p *parser) disjunction(out *strings.Builder) {
	p.alternative(out)
	for p.more() && p.peek(0) == '|' {
		p.pos++
		out.WriteByte('|')
		p.alternative(out)
	}
}

func (p *parser) alternative(out *strings.Builder) {
	for p.more() {
		if c := p.peek(0); c == '|' || c == ')' {
			return
		}
		p.term(out)
	}
}

// term is an assertion or an atom with an optional quantifier.
func (p *parser) term(out *strings.Builder) {
	var atom string
	switch c := p.peek(0); c {
	case '^', '$':
		p.pos++
		out.WriteByte(byte(c))
		p.noQuantifier()
		return
	case '\\':
		if n := p.peek(1); n == 'b' || n == 'B' {
			p.pos += 2
			out.WriteString(`\` + string(rune(n))) // ASCII word boundary in both dialects
			p.noQuantifier()
			return
		}
		atom = p.atomEscape()
	case '(':
		var quantifiable bool
		atom, quantifiable = p.group()
		if !quantifiable {
			p.noQuantifier()
			out.WriteString(atom)
			return
		}
	case '[':
		atom = p.class()
	case '.':
		p.pos++
		atom = emitSet(complement(newSet('\n', '\r', 0x2028, 0x2029)))
	case '*', '+', '?':
		p.fail("nothing to repeat")
		return
	case '{':
		if _, _, _, _, ok := p.braced(); ok {
			p.fail("nothing to repeat")
			return
		}
		p.pos++
		atom = emitUnit('{')
	default:
		p.pos++
		atom = emitUnit(c)
	}
	if p.err != nil {
		return
	}
	q := p.quantifier()
	out.WriteString(atom)
	out.WriteString(q)
}

// noQuantifier fails when a quantifier follows something that cannot repeat.
func (p *parser) noQuantifier() {
	switch p.peek(0) {
	case '*', '+', '?':
		p.fail("nothing to repeat")
	case '{':
		if _, _, _, _, ok := p.braced(); ok {
			p.fail("nothing to repeat")
		}
	}
}

// braced reads {n}, {n,} or {n,m} at pos without consuming it.
func (p *parser) braced() (lo, hi int, bounded bool, end int, ok bool) {
	i := p.pos
	if i >= len(p.src) || p.src[i] != '{' {
		return
	}
	i++
	num := func() (int, bool) {
		start, v := i, 0
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			if v < 1<<31 {
				v = v*10 + int(p.src[i]-'0')
			}
			i++
		}
		return v, i > start
	}
	var has bool
	if lo, has = num(); !has {
		return
	}
	hi, bounded = lo, true
	if i < len(p.src) && p.src[i] == ',' {
		i++
		hi, bounded = num()
	}
	if i >= len(p.src) || p.src[i] != '}' {
		return
	}
	return lo, hi, bounded, i + 1, true
}

// quantifier consumes an optional quantifier and returns its Go spelling.
func (p *parser) quantifier() string {
	var q string
	switch c := p.peek(0); c {
	case '*', '+', '?':
		p.pos++
		q = string(rune(c))
	case '{':
		lo, hi, bounded, end, ok := p.braced()
		if !ok {
			return ""
		}
		if bounded && hi < lo {
			p.fail("numbers out of order in {} quantifier")
			return ""
		}
		if lo > maxRepeat || (bounded && hi > maxRepeat) {
			p.unsupportedAt(p.pos, fmt.Sprintf("a repetition count above %d", maxRepeat))
		}
		p.pos = end
		switch {
		case !bounded:
			q = fmt.Sprintf("{%d,}", lo)
		case hi == lo:
			q = fmt.Sprintf("{%d}", lo)
		default:
			q = fmt.Sprintf("{%d,%d}", lo, hi)
		}
	default:
		return ""
	}
	if p.peek(0) == '?' {
		p.pos++
		q += "?"
	}
	return q
}

// group reads a parenthesised construct. quantifiable is false for
// lookbehind, which Annex B does not let repeat.
func (p *parser) group() (atom string, quantifiable bool) {
	start := p.pos
	p.pos++ // (
	quantifiable = true
	if p.peek(0) == '?' {
		switch p.peek(1) {
		case ':':
			p.pos += 2
		case '=', '!':
			p.unsupportedAt(start, "a lookahead assertion ("+string(utf16.Decode(p.src[start:p.pos+2]))+"…)")
			p.pos += 2
		case '<':
			if n := p.peek(2); n == '=' || n == '!' {
				p.unsupportedAt(start, "a lookbehind assertion ("+string(utf16.Decode(p.src[start:p.pos+3]))+"…)")
				p.pos += 3
				quantifiable = false
				break
			}
			p.pos += 2
			nameStart := p.pos
			name, ok := p.groupName()
			if !ok {
				p.pos = nameStart
				p.fail("invalid capture group name")
				return "", false
			}
			if p.seen[name] {
				p.unsupportedAt(start, fmt.Sprintf("a duplicate group name %q (newer JavaScript engines accept it in different alternatives)", name))
			}
			p.seen[name] = true
		default:
			if !p.modifiers() {
				p.fail("invalid group")
				return "", false
			}
			p.unsupportedAt(start, "a modifier group (?flags:…) (accepted by newer JavaScript engines only)")
		}
	}
	var inner strings.Builder
	p.disjunction(&inner)
	if p.err != nil {
		return "", false
	}
	if p.peek(0) != ')' {
		p.fail("unterminated group")
		return "", false
	}
	p.pos++
	return "(?:" + inner.String() + ")", quantifiable
}

// modifiers consumes "?ims-ims:" of a modifier group, if that is what follows.
func (p *parser) modifiers() bool {
	i := p.pos + 1
	seen := map[uint16]bool{}
	dash := false
	for ; i < len(p.src); i++ {
		switch c := p.src[i]; c {
		case 'i', 'm', 's':
			if seen[c] {
				return false
			}
			seen[c] = true
		case '-':
			if dash {
				return false
			}
			dash = true
		case ':':
			if len(seen) == 0 && !dash {
				return false
			}
			p.pos = i + 1
			return true
		default:
			return false
		}
	}
	return false
}

// groupName reads RegExpIdentifierName '>' after "(?<" or "\k<".
func (p *parser) groupName() (string, bool) {
	var name []rune
	for {
		if p.pos >= len(p.src) {
			return "", false
		}
		c := p.src[p.pos]
		if c == '>' {
			p.pos++
			return string(name), len(name) > 0
		}
		var r rune
		switch {
		case c == '\\':
			var ok bool
			if r, ok = p.nameEscape(); !ok {
				return "", false
			}
		case utf16.IsSurrogate(rune(c)) && p.pos+1 < len(p.src):
			r = utf16.DecodeRune(rune(c), rune(p.src[p.pos+1]))
			p.pos += 2
		default:
			r = rune(c)
			p.pos++
		}
		if !idChar(r, len(name) == 0) {
			return "", false
		}
		name = append(name, r)
	}
}

// nameEscape reads \uXXXX (a surrogate pair allowed) or \u{X…} in a group name.
func (p *parser) nameEscape() (rune, bool) {
	if p.peek(1) != 'u' {
		return 0, false
	}
	p.pos += 2
	if p.peek(0) == '{' {
		v, i := 0, p.pos+1
		for i < len(p.src) && isHex(p.src[i]) && v <= unicode.MaxRune {
			v = v*16 + hexVal(p.src[i])
			i++
		}
		if i == p.pos+1 || i >= len(p.src) || p.src[i] != '}' || v > unicode.MaxRune {
			return 0, false
		}
		p.pos = i + 1
		return rune(v), true
	}
	v, ok := p.hex(4)
	if !ok {
		return 0, false
	}
	if utf16.IsSurrogate(rune(v)) && p.peek(0) == '\\' && p.peek(1) == 'u' {
		save := p.pos
		p.pos += 2
		if lo, ok := p.hex(4); ok {
			if r := utf16.DecodeRune(rune(v), rune(lo)); r != unicode.ReplacementChar {
				return r, true
			}
		}
		p.pos = save
	}
	return rune(v), true
}

func idChar(r rune, first bool) bool {
	if r == '$' || r == '_' {
		return true
	}
	if unicode.Is(unicode.Pattern_Syntax, r) || unicode.Is(unicode.Pattern_White_Space, r) {
		return false
	}
	if unicode.In(r, unicode.L, unicode.Nl, unicode.Other_ID_Start) {
		return true
	}
	return !first && (r == 0x200C || r == 0x200D || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue))
}

// hex reads n hex digits at pos; nothing is consumed on failure.
func (p *parser) hex(n int) (int, bool) {
	if p.pos+n > len(p.src) {
		return 0, false
	}
	v := 0
	for _, c := range p.src[p.pos : p.pos+n] {
		if !isHex(c) {
			return 0, false
		}
		v = v*16 + hexVal(c)
	}
	p.pos += n
	return v, true
}

func isHex(c uint16) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c uint16) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

func isOctal(c uint16) bool  { return c >= '0' && c <= '7' }
func isLetter(c uint16) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// atomEscape reads an escape outside a class, pos at the backslash.
func (p *parser) atomEscape() string {
	start := p.pos
	p.pos++
	if p.pos >= len(p.src) {
		p.fail(`\ at end of pattern`)
		return ""
	}
	switch c := p.src[p.pos]; {
	case c >= '1' && c <= '9':
		save, n := p.pos, 0
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			if n < 1<<31 {
				n = n*10 + int(p.src[p.pos]-'0')
			}
			p.pos++
		}
		if n <= p.groups {
			p.unsupportedAt(start, fmt.Sprintf(`a backreference \%d`, n))
			return "(?:)"
		}
		// Annex B: not a backreference, so a legacy octal escape or an identity escape.
		p.pos = save
		if c >= '8' {
			p.pos++
			return emitUnit(c)
		}
		return emitUnit(p.octal())
	case c == 'k' && p.named:
		p.pos++
		if p.peek(0) != '<' {
			p.fail("invalid named reference")
			return ""
		}
		p.pos++
		name, ok := p.groupName()
		if !ok || !p.names[name] {
			p.fail("invalid named capture referenced")
			return ""
		}
		p.unsupportedAt(start, fmt.Sprintf(`a backreference \k<%s>`, name))
		return "(?:)"
	case c == 'c':
		if isLetter(p.peek(1)) {
			v := p.peek(1) % 32
			p.pos += 2
			return emitUnit(v)
		}
		// Annex B: "\c" not followed by a letter is a literal backslash.
		return emitUnit('\\')
	}
	if set, ok := p.characterEscape(false); ok {
		return emitSet(set)
	}
	return ""
}

// controlEscapes are the code units of the ControlEscapes \f \n \r \t \v.
var controlEscapes = map[uint16]uint16{'f': 0x0C, 'n': 0x0A, 'r': 0x0D, 't': 0x09, 'v': 0x0B}

// characterEscape reads the escapes shared by atoms and classes, pos after
// the backslash. It never fails for a unit it does not know: that is an
// identity escape in non-Unicode mode.
func (p *parser) characterEscape(inClass bool) (set, bool) {
	c := p.src[p.pos]
	switch c {
	case 'd', 'D', 's', 'S', 'w', 'W':
		p.pos++
		return classEscape(c), true
	case 'f', 'n', 'r', 't', 'v':
		p.pos++
		return newSet(controlEscapes[c]), true
	case 'x', 'u':
		p.pos++
		digits := 2
		if c == 'u' {
			digits = 4
		}
		if v, ok := p.hex(digits); ok {
			return newSet(uint16(v)), true
		}
		return newSet(c), true
	case '0':
		if n := p.peek(1); n < '0' || n > '9' {
			p.pos++
			return newSet(0), true
		}
		return newSet(p.octal()), true
	case 'k':
		if inClass && p.named {
			p.fail("invalid escape")
			return nil, false
		}
	}
	p.pos++
	return newSet(c), true
}

// octal reads a legacy octal escape (Annex B): up to three digits, at most 0377.
func (p *parser) octal() uint16 {
	d0 := p.src[p.pos] - '0'
	p.pos++
	v := d0
	if p.pos < len(p.src) && isOctal(p.src[p.pos]) {
		v = v*8 + p.src[p.pos] - '0'
		p.pos++
		if d0 <= 3 && p.pos < len(p.src) && isOctal(p.src[p.pos]) {
			v = v*8 + p.src[p.pos] - '0'
			p.pos++
		}
	}
	return v
}

// class reads a character class, pos at '['.
func (p *parser) class() string {
	p.pos++
	negate := false
	if p.peek(0) == '^' {
		p.pos++
		negate = true
	}
	var members set
	for {
		if p.err != nil {
			return ""
		}
		if p.pos >= len(p.src) {
			p.fail("unterminated character class")
			return ""
		}
		if p.src[p.pos] == ']' {
			p.pos++
			break
		}
		a, aSingle := p.classAtom()
		if p.err != nil {
			return ""
		}
		if p.peek(0) == '-' && p.peek(1) != ']' && p.pos+1 < len(p.src) {
			p.pos++
			b, bSingle := p.classAtom()
			if p.err != nil {
				return ""
			}
			if !aSingle || !bSingle {
				// Annex B: a class escape at either end makes it three members.
				members = members.union(a).union(newSet('-')).union(b)
				continue
			}
			if a[0].lo > b[0].lo {
				p.fail("range out of order in character class")
				return ""
			}
			members = members.union(set{{a[0].lo, b[0].lo}})
			continue
		}
		members = members.union(a)
	}
	if negate {
		members = complement(members)
	}
	return emitSet(members)
}

// classAtom reads one class member; single reports a single unit (usable as
// a range end) rather than a class escape.
func (p *parser) classAtom() (s set, single bool) {
	c := p.src[p.pos]
	if c != '\\' {
		p.pos++
		return newSet(c), true
	}
	p.pos++
	if p.pos >= len(p.src) {
		p.fail(`\ at end of pattern`)
		return nil, false
	}
	switch e := p.src[p.pos]; {
	case e == 'b':
		p.pos++
		return newSet(0x08), true
	case e == 'c':
		if n := p.peek(1); isLetter(n) || n >= '0' && n <= '9' || n == '_' {
			p.pos += 2
			return newSet(n % 32), true
		}
		return newSet('\\'), true // Annex B: the backslash is literal, 'c' comes next
	case e >= '1' && e <= '7':
		return newSet(p.octal()), true
	case e == '8' || e == '9':
		p.pos++
		return newSet(e), true
	}
	s, ok := p.characterEscape(true)
	if !ok {
		return nil, false
	}
	// \d, \s, \w and their complements are never a single unit.
	return s, len(s) == 1 && s[0].lo == s[0].hi
}
