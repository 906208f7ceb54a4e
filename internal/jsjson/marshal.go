package jsjson

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal with JSON.stringify's treatment of <, > and &:
// written as they are, not escaped as \u003c, \u003e and \u0026. A Go
// value whose JSON the wire carries (a request body, a tool result's meta)
// is written with it.
func Marshal(v any) ([]byte, error) { return MarshalIndent(v, "") }

// MarshalIndent is [Marshal] with json.MarshalIndent's layout: each element
// on a line of its own, indent once more per level (no prefix); "" is
// Marshal's compact form. No trailing newline either.
func MarshalIndent(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
