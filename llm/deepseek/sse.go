package deepseek

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// sseReader reads the data payloads of a server-sent event stream: lines
// end in LF, CR or CRLF; "data:" lines (one leading space dropped) join with
// LF; a blank line dispatches the event; comment lines (":") only count as
// activity; an event the stream ends inside is never dispatched.
type sseReader struct {
	r        *bufio.Reader
	activity func()
	first    bool
	pendCR   bool
}

func newSSEReader(r io.Reader, activity func()) *sseReader {
	return &sseReader{r: bufio.NewReader(r), activity: activity, first: true}
}

// line reads one line without its terminator.
func (s *sseReader) line() (string, error) {
	var b bytes.Buffer
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return b.String(), err
		}
		if s.pendCR {
			s.pendCR = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			return b.String(), nil
		case '\r':
			s.pendCR = true
			return b.String(), nil
		}
		b.WriteByte(c)
	}
}

// next returns the next event's data; io.EOF (or the read error) when the
// stream ends, the pending event dropped.
func (s *sseReader) next() (string, error) {
	var data []string
	for {
		ln, err := s.line()
		if err != nil {
			return "", err
		}
		if s.first {
			s.first = false
			ln = strings.TrimPrefix(ln, "\ufeff")
		}
		if s.activity != nil {
			s.activity()
		}
		if ln == "" {
			if data != nil {
				return strings.Join(data, "\n"), nil
			}
			continue
		}
		if strings.HasPrefix(ln, ":") {
			continue
		}
		field, value, found := strings.Cut(ln, ":")
		if !found {
			field, value = ln, ""
		}
		value = strings.TrimPrefix(value, " ")
		if field == "data" {
			data = append(data, value)
		}
	}
}
