package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Stringify prints the JSON value data as JavaScript's JSON.stringify(value,
// null, 2) does: object keys in stored order, two-space indentation, "[]"
// and "{}" for empty containers, strings escaped only where JavaScript
// escapes them (quote, backslash, control characters; no HTML escaping,
// non-ASCII raw), numbers as stored. Invalid JSON renders as "null".
func Stringify(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var b strings.Builder
	if err := writeValue(&b, dec, ""); err != nil {
		return "null"
	}
	return b.String()
}

func writeValue(b *strings.Builder, dec *json.Decoder, indent string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		open, close := string(t), "}"
		if t == '[' {
			close = "]"
		}
		inner := indent + "  "
		n := 0
		for dec.More() {
			if n == 0 {
				b.WriteString(open + "\n")
			} else {
				b.WriteString(",\n")
			}
			b.WriteString(inner)
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				b.WriteString(QuoteJS(k.(string)) + ": ")
			}
			if err := writeValue(b, dec, inner); err != nil {
				return err
			}
			n++
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		if n == 0 {
			b.WriteString(open + close)
		} else {
			b.WriteString("\n" + indent + close)
		}
	case string:
		b.WriteString(QuoteJS(t))
	case json.Number:
		b.WriteString(t.String())
	case bool:
		fmt.Fprint(b, t)
	case nil:
		b.WriteString("null")
	}
	return nil
}

// QuoteJS quotes s as JSON.stringify does.
func QuoteJS(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
