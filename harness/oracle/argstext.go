package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ArgumentsText is the text a call's arguments are sent as: the JSON value
// spelled as the first generator (Python's json.dumps) spelled it, so that a
// script encodes to the same model text as the recordings made from it:
// ", " between items, ": " after keys, keys in the order written, every
// character outside printable ASCII escaped as \uXXXX (a pair of surrogates
// above U+FFFF), numbers as written. Invalid JSON is sent as it is (a model
// may send that too).
func ArgumentsText(raw json.RawMessage) string {
	var b strings.Builder
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := writeValue(&b, dec); err != nil {
		return string(raw)
	}
	if _, err := dec.Token(); err != io.EOF {
		return string(raw)
	}
	return b.String()
}

func writeValue(b *strings.Builder, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		return writeContainer(b, dec, v)
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		fmt.Fprint(b, v)
	case nil:
		b.WriteString("null")
	}
	return nil
}

func writeContainer(b *strings.Builder, dec *json.Decoder, open json.Delim) error {
	b.WriteRune(rune(open))
	for i := 0; dec.More(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if open == '{' {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			writeString(b, key.(string))
			b.WriteString(": ")
		}
		if err := writeValue(b, dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return err
	}
	if open == '{' {
		b.WriteByte('}')
	} else {
		b.WriteByte(']')
	}
	return nil
}

// writeString quotes s with ASCII-only escapes.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
}
