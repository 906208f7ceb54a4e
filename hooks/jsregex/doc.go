// Package jsregex runs JavaScript (ECMAScript) regular expressions, as
// upstream's hook matchers use them (new RegExp(pattern) with no flags, then
// .test(subject)), on Go's regexp engine.
//
// Go's regexp (RE2) is a different dialect in both directions: it rejects
// patterns JavaScript accepts ((?=a), \1), accepts patterns JavaScript rejects
// ((?i)a), and reads some shared spellings differently (\z, \p{L}, \s, $).
// So a pattern is never handed to regexp as written. [Compile] parses it with
// the ECMAScript grammar (non-Unicode mode with the web-compatibility rules of
// Annex B, which is what a flagless RegExp uses) and emits an equivalent Go
// program in which every character is an explicit code point, every class an
// explicit range list, and every group non-capturing.
//
// # What is supported
//
// Everything a flagless JavaScript RegExp accepts, except:
//
//   - lookahead and lookbehind assertions: (?=…) (?!…) (?<=…) (?<!…)
//   - backreferences: \1 … (when that many groups exist) and \k<name>
//   - modifier groups (?i:…) and duplicate group names (newer engines only)
//   - a repetition count above 1000 (Go's limit)
//
// These return an [*UnsupportedError]: the pattern is valid JavaScript but
// this package cannot run it. A pattern JavaScript rejects returns a
// [*SyntaxError]. Nothing is ever approximated: a pattern either compiles to
// the same language JavaScript matches, or Compile fails.
//
// # Code units
//
// A flagless JavaScript RegExp matches UTF-16 code units: "😀" is two units,
// so /^.$/ does not match it and /^..$/ does. Both the pattern and the subject
// are read as UTF-16 code units here; a surrogate unit becomes the private
// code point U+F0000 + (unit − 0xD800) for the Go program, so the two agree
// on every string.
//
// # Not for
//
// Flags (i, m, s, u, v, y, g), capture extraction, match positions. This
// package imports nothing of this repository.
package jsregex
