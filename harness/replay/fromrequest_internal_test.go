package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
)

// TestResolveChunks: a fromRequest placeholder takes the last match of
// its pattern among the string values of the conversation's messages
// (its first group, or the whole match); what cannot resolve is an error.
func TestResolveChunks(t *testing.T) {
	events := []session.Event{
		{Type: session.KindUserMessage, Seq: 1, Data: json.RawMessage(`{"content":[{"type":"text","text":"goal-aaa and goal-bbb"}],"source":{"kind":"user"}}`)},
		{Type: session.KindToolResult, Seq: 2, Data: json.RawMessage(`{"message":{"content":[{"type":"tool-result","content":[{"type":"text","text":"{\"goal\":{\"id\":\"goal-ccc\"}}"}]}]},"turn":1}`)},
		{Type: session.KindRequestHeader, Seq: 3, Data: json.RawMessage(`{"header":{"system":"goal-fff"}}`)},
		{Type: session.KindUserMessage, Seq: 4, Data: json.RawMessage(`{"content":[],"source":{"kind":"goal","goalId":"goal-ddd"},"goal-eee":1}`)},
	}
	for _, tc := range []struct{ name, text, want, err string }{
		{"last match wins, keys and other events left out", `{{fromRequest:goal-[a-f]+}}`, "goal-ddd", ""},
		{"its first group", `x {{fromRequest:"id":"(goal-[a-f]+)"}} y`, `x goal-ccc y`, ""},
		{"two placeholders", `{{fromRequest:goal-a+}}/{{fromRequest:goal-b+}}`, "goal-aaa/goal-bbb", ""},
		{"a brace quantifier ends the pattern", `{{fromRequest:goal-c{3}}}`, "goal-ccc", ""},
		{"no placeholder", `plain`, "plain", ""},
		{"no match", `{{fromRequest:goal-z+}}`, "", `llm-replay: fromRequest pattern "goal-z+" matched nothing in the request`},
		{"unterminated", `{{fromRequest:goal-`, "", "llm-replay: fromRequest placeholder is unterminated"},
		{"invalid pattern", `{{fromRequest:goal-(}}`, "", `llm-replay: fromRequest has an invalid pattern "goal-("`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := []map[string]any{{"type": "tool-call-delta", "argumentsDelta": tc.text, "index": 0.0}}
			got, err := resolveChunks(chunks, events)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got[0]["argumentsDelta"] != tc.want || got[0]["index"] != 0.0 {
				t.Fatalf("got %v %v, want %q", got, err, tc.want)
			}
			if chunks[0]["argumentsDelta"] != tc.text {
				t.Fatal("the script's chunk was changed in place")
			}
		})
	}
}
