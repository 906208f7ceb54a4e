package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// The placeholder llm-replay resolves against the live request.
const (
	fromRequestOpen  = "{{fromRequest:"
	fromRequestClose = "}}"
)

// resolveChunks resolves every {{fromRequest:<pattern>}} placeholder in a
// scripted reply's chunks against the request, as upstream's llm-replay
// does: the corpus is every string value of the request's messages (here
// the log's user, assistant and tool-result messages, in order) joined by
// newlines; the pattern's last match wins, its first group (or the whole
// match) replacing the placeholder. The pattern is Go's RE2 syntax where
// upstream's is JavaScript's (the placeholders of upstream's sidecars are
// plain classes, the same in both). A pattern that does not compile or
// matches nothing, or a placeholder without its end, is an error.
func resolveChunks(chunks []map[string]any, events []session.Event) ([]map[string]any, error) {
	if !hasPlaceholder(chunks) {
		return chunks, nil
	}
	corpus, err := requestCorpus(events)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(chunks))
	for i, c := range chunks {
		v, err := substituteValue(c, corpus)
		if err != nil {
			return nil, err
		}
		out[i] = v.(map[string]any)
	}
	return out, nil
}

// hasPlaceholder reports whether a string of chunks holds a placeholder.
func hasPlaceholder(chunks []map[string]any) bool {
	raw, err := json.Marshal(chunks)
	return err == nil && bytes.Contains(raw, []byte(fromRequestOpen))
}

// requestCorpus joins the string values of the conversation's messages.
func requestCorpus(events []session.Event) (string, error) {
	var leaves []string
	for _, e := range events {
		var msg json.RawMessage
		switch e.Type {
		case session.KindUserMessage:
			msg = e.Data
		case session.KindAssistantMessage, session.KindToolResult:
			var d struct {
				Message json.RawMessage `json:"message"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return "", fmt.Errorf("seq %d (%s): %w", e.Seq, e.Type, err)
			}
			msg = d.Message
		default:
			continue
		}
		s, err := stringValues(msg)
		if err != nil {
			return "", fmt.Errorf("seq %d (%s): %w", e.Seq, e.Type, err)
		}
		leaves = append(leaves, s...)
	}
	return strings.Join(leaves, "\n"), nil
}

// stringValues are the string values (not the keys) of a JSON document,
// in document order.
func stringValues(doc json.RawMessage) ([]string, error) {
	if len(doc) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	var out []string
	var inObject []bool // per open container: an object?
	keyNext := false    // the next string of the innermost object is a key
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				inObject = append(inObject, t == '{')
				keyNext = t == '{'
				continue
			}
			inObject = inObject[:len(inObject)-1]
		case string:
			if keyNext {
				keyNext = false
				continue
			}
			out = append(out, t)
		}
		keyNext = len(inObject) > 0 && inObject[len(inObject)-1]
	}
}

// substituteValue copies v with every placeholder in its strings resolved.
func substituteValue(v any, corpus string) (any, error) {
	switch t := v.(type) {
	case string:
		if !strings.Contains(t, fromRequestOpen) {
			return t, nil
		}
		return substituteString(t, corpus)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			var err error
			if out[i], err = substituteValue(e, corpus); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			var err error
			if out[k], err = substituteValue(e, corpus); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// substituteString resolves the placeholders of one string: the last two
// braces of a run of closing braces end one (a pattern may end with a
// brace quantifier).
func substituteString(text, corpus string) (string, error) {
	var b strings.Builder
	for {
		open := strings.Index(text, fromRequestOpen)
		if open < 0 {
			return b.String() + text, nil
		}
		rest := text[open+len(fromRequestOpen):]
		end := strings.Index(rest, fromRequestClose)
		if end < 0 {
			return "", fmt.Errorf("llm-replay: fromRequest placeholder is unterminated in %s", jsjson.Quote(text))
		}
		for end+2 < len(rest) && rest[end+2] == '}' {
			end++
		}
		got, err := resolvePattern(rest[:end], corpus)
		if err != nil {
			return "", err
		}
		b.WriteString(text[:open] + got)
		text = rest[end+len(fromRequestClose):]
	}
}

// resolvePattern is the last match of pattern in corpus: its first group,
// or the whole match.
func resolvePattern(pattern, corpus string) (string, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", fmt.Errorf("llm-replay: fromRequest has an invalid pattern %s: %v", jsjson.Quote(pattern), err)
	}
	all := re.FindAllStringSubmatch(corpus, -1)
	if len(all) == 0 {
		return "", fmt.Errorf("llm-replay: fromRequest pattern %s matched nothing in the request", jsjson.Quote(pattern))
	}
	last := all[len(all)-1]
	if len(last) > 1 {
		return last[1], nil
	}
	return last[0], nil
}
