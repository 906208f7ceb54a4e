package llm

import (
	"encoding/json"
	"unicode/utf16"
)

// Roles of a conversation message.
const (
	User      = "user"
	Assistant = "assistant"
)

// Message is one message of the conversation a request carries: a user
// message (text, and tool-result blocks), or an assistant message (text,
// reasoning and tool-call blocks).
type Message struct {
	Role    string
	Content []Block
}

// Tool is a tool the model is offered.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage
}

// SummaryMaxUnits bounds a message source's summary (upstream's
// CONTEXT_SUMMARY_MAX_CHARS), in UTF-16 code units.
const SummaryMaxUnits = 120

// BoundSummary cuts s to [SummaryMaxUnits] UTF-16 code units: the first 119
// and "…" when it is longer (a surrogate pair is never split), as upstream
// bounds a notice's summary.
func BoundSummary(s string) string {
	u := utf16.Encode([]rune(s))
	if len(u) <= SummaryMaxUnits {
		return s
	}
	cut := u[:SummaryMaxUnits-1]
	if r := rune(cut[len(cut)-1]); r >= 0xd800 && r < 0xdc00 { // a lone high surrogate
		cut = cut[:len(cut)-1]
	}
	return string(utf16.Decode(cut)) + "…"
}
