package shell

import (
	"strings"
	"unicode/utf8"

	"github.com/dshsim/dshsim/internal/jstext"
)

// Prompt is the shell's prompt (PS1), after the private prompt marker.
const Prompt = "dsh> "

// promptMarker is the payload prefix of the OSC sequence the shell's
// PROMPT_COMMAND prints before each prompt (OSC 133;D;<status> BEL).
const promptMarker = "133;D;"

// screen turns what the terminal printed into text as upstream's
// TerminalSanitizer does: escape sequences (CSI, OSC, two-byte) removed,
// an escape split across reads carried, CRLF and a lone CR made LF, BEL
// removed; an OSC 133;D marks a prompt. It keeps the text since the last
// mark, bounded to its last maxBytes and maxLines (then dropped is set).
type screen struct {
	maxBytes, maxLines int

	raw     []byte // an incomplete UTF-8 sequence carried to the next read
	pending string // an incomplete escape sequence carried to the next read
	cr      bool   // the text ended in a CR (a CRLF may be split)

	text    string
	dropped bool
	// prompted is whether a prompt marker came since the last mark.
	prompted bool
	// prompts counts the prompt markers; tail is the text after the last
	// one (its first len(Prompt)+1 bytes).
	prompts int
	tail    string
	// written counts the text appended (output that was not only escape
	// sequences).
	written int64
}

// write adds what the terminal printed.
func (s *screen) write(b []byte) {
	s.raw = append(s.raw, b...)
	n := completeUTF8(s.raw)
	chunk := jstext.Decode(s.raw[:n])
	s.raw = append(s.raw[:0], s.raw[n:]...)
	s.push(chunk)
}

// flush ends the stream: a carried partial sequence is decoded, an
// incomplete escape dropped, a trailing CR made a newline.
func (s *screen) flush() {
	if len(s.raw) > 0 {
		s.push(jstext.Decode(s.raw))
		s.raw = nil
	}
	s.pending = ""
	if s.cr {
		s.cr = false
		s.appendText("\n")
	}
}

// push sanitizes chunk.
func (s *screen) push(chunk string) {
	p := s.pending + chunk
	var out strings.Builder
	i := 0
	for i < len(p) {
		esc := strings.IndexByte(p[i:], 0x1b)
		if esc < 0 {
			out.WriteString(p[i:])
			break
		}
		out.WriteString(p[i : i+esc])
		i += esc
		if i+1 >= len(p) {
			break
		}
		switch p[i+1] {
		case ']':
			end, body := oscEnd(p, i)
			if end < 0 {
				goto carry
			}
			s.appendText(out.String())
			out.Reset()
			if strings.HasPrefix(body, promptMarker) {
				s.prompted = true
				s.prompts++
				s.tail = ""
			}
			i = end
		case '[':
			j := i + 2
			for j < len(p) && (p[j] < 64 || p[j] > 126) {
				j++
			}
			if j >= len(p) {
				goto carry
			}
			i = j + 1
		default:
			i += 2
		}
	}
	s.pending = ""
	s.appendText(out.String())
	return
carry:
	s.pending = p[i:]
	if len(s.pending) > 64<<10 { // a sequence that never ends is dropped
		s.pending = ""
	}
	s.appendText(out.String())
}

// oscEnd is the end of the OSC sequence at p[i] (BEL or ESC \ ends it) and
// its payload; -1 when it is not complete yet.
func oscEnd(p string, i int) (int, string) {
	bel := strings.IndexByte(p[i+2:], 0x07)
	st := strings.Index(p[i+2:], "\x1b\\")
	switch {
	case bel >= 0 && (st < 0 || bel < st):
		return i + 2 + bel + 1, p[i+2 : i+2+bel]
	case st >= 0:
		return i + 2 + st + 2, p[i+2 : i+2+st]
	}
	return -1, ""
}

// appendText normalizes line ends and keeps the bounded text.
func (s *screen) appendText(t string) {
	if s.cr {
		t, s.cr = "\r"+t, false
	}
	if strings.HasSuffix(t, "\r") {
		t, s.cr = t[:len(t)-1], true
	}
	if t == "" {
		return
	}
	t = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(t, "\r\n", "\n"), "\r", "\n"), "\a", "")
	s.written += int64(len(t))
	if s.prompts > 0 && len(s.tail) <= len(Prompt) {
		s.tail += t[:min(len(t), len(Prompt)+1-len(s.tail))]
	}
	s.text += t
	if lines := strings.Count(s.text, "\n") + 1; lines > s.maxLines {
		cut := 0
		for range lines - s.maxLines {
			cut += strings.IndexByte(s.text[cut:], '\n') + 1
		}
		s.text, s.dropped = s.text[cut:], true
	}
	if len(s.text) > s.maxBytes {
		cut := len(s.text) - s.maxBytes
		for cut < len(s.text) && !utf8.RuneStart(s.text[cut]) {
			cut++
		}
		s.text, s.dropped = s.text[cut:], true
	}
}

// atPrompt reports whether the shell printed its prompt marker since the
// mark (its PROMPT_COMMAND prints it before every prompt: the shell reads
// its next line).
func (s *screen) atPrompt() bool { return s.prompted }

// bare reports whether the text after the last prompt marker is exactly
// the prompt: the shell reads its next line with nothing printed since.
func (s *screen) bare() bool { return s.prompts > 0 && s.tail == Prompt }

// mark starts a new command's text.
func (s *screen) mark() {
	s.text, s.dropped, s.prompted = "", false, false
}

// completeUTF8 is the length of b's prefix that ends on a complete UTF-8
// sequence (or an invalid one, which the decoder replaces): an incomplete
// sequence at the end waits for the next read.
func completeUTF8(b []byte) int {
	for back := 1; back <= 3 && back <= len(b); back++ {
		if c := b[len(b)-back]; !utf8.RuneStart(c) {
			continue // a continuation byte
		}
		if utf8.FullRune(b[len(b)-back:]) {
			return len(b)
		}
		return len(b) - back
	}
	return len(b)
}
