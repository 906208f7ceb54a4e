package sessionquery

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// snippetChars is the longest snippet, in code points (upstream's
// session-query-sqlite snippetChars default).
const snippetChars = 240

// token is one word of a text: its folded form and its byte range.
type token struct {
	word       string
	start, end int
}

// isTokenRune is SQLite FTS5's unicode61 rule: letters, numbers and private
// use characters make words; everything else separates them.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// tokenize splits s into unicode61 words, folded to lower case. unicode61
// also strips Latin diacritics (remove_diacritics 1); this port does not:
// "é" matches only "é" (departure named in doc.go).
func tokenize(s string) []token {
	var out []token
	start := -1
	for i, r := range s {
		switch {
		case isTokenRune(r) && start < 0:
			start = i
		case !isTokenRune(r) && start >= 0:
			out = append(out, token{strings.ToLower(s[start:i]), start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, token{strings.ToLower(s[start:]), start, len(s)})
	}
	return out
}

// span is a highlighted byte range of a document.
type span struct{ start, end int }

// phraseSpans finds the query's words q (tokenize of the query, made once
// per search) as a phrase (consecutive, in order) in text and returns the
// highlighted ranges as FTS5's highlight() marks them: instances that share
// a word are one range, adjacent ones are not. A query without words
// matches nothing.
func phraseSpans(text string, q []token) []span {
	if len(q) == 0 {
		return nil
	}
	doc := tokenize(text)
	var out []span
	lastTok := -1
	for i := 0; i+len(q) <= len(doc); i++ {
		if !phraseAt(doc[i:], q) {
			continue
		}
		endTok := i + len(q) - 1
		if len(out) > 0 && i <= lastTok {
			out[len(out)-1].end = doc[endTok].end
		} else {
			out = append(out, span{doc[i].start, doc[endTok].end})
		}
		lastTok = endTok
	}
	return out
}

func phraseAt(doc, q []token) bool {
	for j := range q {
		if doc[j].word != q[j].word {
			return false
		}
	}
	return true
}

// sanitize maps NUL and the two noncharacters upstream reserves as
// highlight markers to U+FFFD, as upstream does before indexing.
func sanitize(s string) string { return sanitizer.Replace(s) }

var sanitizer = strings.NewReplacer("\x00", "\uFFFD", "\uFDD0", "\uFFFD", "\uFDD1", "\uFFFD")

// snippet is upstream's makeSnippet over the highlighted text: whitespace
// runs become one space (none at either end), and a text longer than
// snippetChars code points is cut to a window that starts a third of the
// window before the first match, with "…" where text was cut.
func snippet(text string, spans []span) string {
	var chars []rune
	matchStart := -1
	for i, r := range text {
		if matchStart < 0 && len(spans) > 0 && i == spans[0].start {
			matchStart = len(chars)
		}
		if jsjson.IsSpace(r) {
			if len(chars) > 0 && chars[len(chars)-1] != ' ' {
				chars = append(chars, ' ')
			}
			continue
		}
		chars = append(chars, r)
	}
	if n := len(chars); n > 0 && chars[n-1] == ' ' {
		chars = chars[:n-1]
	}
	if matchStart < 0 {
		matchStart = 0
	}
	if len(chars) <= snippetChars {
		return string(chars)
	}
	at := min(matchStart, len(chars)-1)
	start := max(0, at-snippetChars/3)
	prefix, suffix := "", "…"
	if start > 0 {
		prefix = "…"
	}
	width := snippetChars - utf8.RuneCountInString(prefix) - 1
	if at >= start+width {
		start = at - width + 1
	}
	end := min(len(chars), start+width)
	if end == len(chars) {
		suffix = ""
		width = snippetChars - utf8.RuneCountInString(prefix)
		start = max(0, end-width)
	}
	end = min(len(chars), start+width)
	return prefix + string(chars[start:end]) + suffix
}
