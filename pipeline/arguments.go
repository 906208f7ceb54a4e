package pipeline

import (
	"encoding/json"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// ParseArguments is a call's arguments as upstream's agent loop reads the
// model's text (its parseArguments): an empty text is {}, a text that is
// JSON is that value, and any other text is kept as a string (so a tool's
// schema check then says `"arguments" must be an object`). The result is
// always JSON; whether it is lossless is the pipeline's first check
// ([LosslessArgs]).
func ParseArguments(text string) json.RawMessage {
	if text == "" {
		return json.RawMessage(`{}`)
	}
	if _, err := jsjson.Parse([]byte(text)); err == nil {
		return json.RawMessage(text)
	}
	b, _ := json.Marshal(text) // a Go string always encodes
	return b
}

// LosslessArgs reports whether a call's arguments pass upstream's first
// check (createExecution's snapshotJsonValue): JSON that JSON.parse reads
// and whose every number is finite and not -0, declared field or not. A call
// that fails it ends with [MsgArgsNotLossless] before any listener, guard
// or schema check sees it.
func LosslessArgs(args json.RawMessage) bool {
	v, err := jsjson.Parse(args)
	return err == nil && jsjson.Lossless(v)
}
