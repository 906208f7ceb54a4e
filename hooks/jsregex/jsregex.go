package jsregex

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
)

// Regexp is a compiled JavaScript pattern.
type Regexp struct {
	source string
	prog   *regexp.Regexp
}

// SyntaxError reports a pattern JavaScript itself rejects
// (new RegExp(pattern) throws).
type SyntaxError struct {
	// Pattern is the pattern as given.
	Pattern string
	// Offset is the UTF-16 code unit offset where the problem was found.
	Offset int
	// Problem says what is wrong, e.g. "nothing to repeat".
	Problem string
}

// Error says what JavaScript rejects and where.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid regular expression /%s/: %s (at offset %d)", e.Pattern, e.Problem, e.Offset)
}

// UnsupportedError reports a pattern JavaScript accepts but this package
// cannot run on Go's engine.
type UnsupportedError struct {
	// Pattern is the pattern as given.
	Pattern string
	// Offset is the UTF-16 code unit offset of the construct.
	Offset int
	// Feature names the construct, e.g. "a lookahead assertion ((?=…)".
	Feature string
}

// Error names the construct Go cannot run and where.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("regular expression /%s/ uses %s (at offset %d), which Go's regexp cannot run: refused rather than matched differently", e.Pattern, e.Feature, e.Offset)
}

// Compile parses pattern as a flagless JavaScript RegExp and compiles its Go
// equivalent. The error is a *SyntaxError or an *UnsupportedError.
func Compile(pattern string) (*Regexp, error) {
	p := &parser{pattern: pattern, src: utf16.Encode([]rune(pattern))}
	p.prescan()
	p.disjunction(&p.out)
	if p.err == nil && p.pos < len(p.src) {
		// disjunction stops only at ')' or the end.
		p.fail("unmatched ')'")
	}
	if p.err != nil {
		return nil, p.err
	}
	if p.unsupported != nil {
		return nil, p.unsupported
	}
	prog, err := regexp.Compile(p.out.String())
	if err != nil {
		// Go's own limits (program size): never approximate.
		return nil, &UnsupportedError{Pattern: pattern, Feature: "a program Go's regexp refuses (" + err.Error() + ")"}
	}
	return &Regexp{source: pattern, prog: prog}, nil
}

// MustCompile is Compile for patterns known to be good; it panics otherwise.
func MustCompile(pattern string) *Regexp {
	re, err := Compile(pattern)
	if err != nil {
		panic(err)
	}
	return re
}

// Test reports whether the pattern matches anywhere in s, like
// RegExp.prototype.test without flags.
func (r *Regexp) Test(s string) bool { return r.prog.MatchString(subject(s)) }

// String returns the JavaScript source pattern.
func (r *Regexp) String() string { return r.source }

// GoProgram returns the Go pattern the JavaScript pattern was compiled to.
func (r *Regexp) GoProgram() string { return r.prog.String() }

// subject maps s to the code-unit alphabet of the Go program.
func subject(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		b.WriteRune(unitRune(u))
	}
	return b.String()
}

// surrogateBase is where surrogate code units live in the Go program's alphabet.
const surrogateBase = 0xF0000

// unitRune maps one UTF-16 code unit to the rune standing for it.
func unitRune(u uint16) rune {
	if u >= 0xD800 && u <= 0xDFFF {
		return surrogateBase + rune(u-0xD800)
	}
	return rune(u)
}
