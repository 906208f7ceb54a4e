package jsjson

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal with JSON.stringify's treatment of <, > and &:
// written as they are, not escaped as \u003c, \u003e and \u0026. A Go
// value whose JSON the wire carries (a request body, a tool result's meta)
// is written with it.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
