package compile

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tWord tokKind = iota // identifier, keyword, #private
	tPunct
	tString   // quoted string, template piece, regex, number
	tTemplate // a whole template literal or a piece of one
)

type token struct {
	kind      tokKind
	text      string
	line, col int // 1-based line, 0-based byte column
}

func (t token) is(p string) bool { return t.kind == tPunct && t.text == p }

// regexAfter are the words after which a slash starts a regular expression.
var regexAfter = map[string]bool{"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "new": true,
	"delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true, "yield": true, "await": true, "extends": true}

// puncts are the multi-character punctuators, longest first.
var puncts = []string{">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>"}

// lex tokenizes JavaScript/TypeScript source that is known to parse. It
// skips comments and whitespace; strings, numbers, regular expressions and
// template literals become opaque tokens (expressions inside ${} are
// tokenized). A slash is a regex when the previous token cannot end an
// expression; "!" and "++"/"--" after an expression are postfix (TypeScript's
// non-null assertion included), so they end one.
func lex(src string) []token {
	var toks []token
	line, lineStart := 1, 0
	var braces []int // template nesting: brace depth at each open ${
	depth := 0
	exprEnd := false
	i := 0
	emit := func(k tokKind, start int, end bool) {
		toks = append(toks, token{kind: k, text: src[start:i], line: line, col: start - lineStart})
		exprEnd = end
	}
	advanceLines := func(from int) {
		for j := from; j < i; j++ {
			if src[j] == '\n' {
				line, lineStart = line+1, j+1
			}
		}
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			i++
			line, lineStart = line+1, i
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			start := i
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(src)
			}
			advanceLines(start)
		case c == '"' || c == '\'':
			start := i
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i = min(i+1, len(src))
			emit(tString, start, true)
		case c == '`' || (c == '}' && len(braces) > 0 && braces[len(braces)-1] == depth):
			if c == '}' {
				braces = braces[:len(braces)-1]
			}
			start := i
			i++
			closed := false
			for i < len(src) {
				if src[i] == '\\' {
					i += 2
					continue
				}
				if src[i] == '`' {
					i++
					closed = true
					break
				}
				if strings.HasPrefix(src[i:], "${") {
					i += 2
					braces = append(braces, depth)
					break
				}
				i++
			}
			i = min(i, len(src))
			l, ls := line, lineStart
			advanceLines(start)
			toks = append(toks, token{kind: tTemplate, text: src[start:i], line: l, col: start - ls})
			exprEnd = closed
		case c == '/' && !exprEnd:
			start := i
			i++
			inClass := false
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' {
					i += 2
					continue
				}
				if src[i] == '[' {
					inClass = true
				} else if src[i] == ']' {
					inClass = false
				} else if src[i] == '/' && !inClass {
					break
				}
				i++
			}
			i = min(i+1, len(src))
			for i < len(src) && isIdentPart(rune(src[i])) {
				i++
			}
			emit(tString, start, true)
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			start := i
			for i < len(src) && (isIdentPart(rune(src[i])) || src[i] == '.') {
				i++
			}
			emit(tString, start, true)
		default:
			r, size := utf8.DecodeRuneInString(src[i:])
			if isIdentStart(r) || c == '#' || c == '\\' {
				start := i
				i += size
				for i < len(src) {
					r, size := utf8.DecodeRuneInString(src[i:])
					if !isIdentPart(r) && r != '\\' {
						break
					}
					i += size
				}
				w := src[start:i]
				emit(tWord, start, !regexAfter[w])
				continue
			}
			start := i
			p := string(c)
			for _, m := range puncts {
				if strings.HasPrefix(src[i:], m) {
					p = m
					break
				}
			}
			i += len(p)
			end := false
			switch p {
			case ")", "]", "}":
				end = true
			case "!", "++", "--":
				end = exprEnd // postfix after an expression
			}
			switch p {
			case "{":
				depth++
			case "}":
				depth--
			}
			emit(tPunct, start, end)
		}
	}
	return toks
}

func isIdentStart(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || unicode.IsDigit(r) || r == 0x200c || r == 0x200d || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r)
}
