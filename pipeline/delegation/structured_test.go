package delegation_test

import (
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
)

func call(id, name, args string) session.Event {
	b, _ := json.Marshal(session.ToolCall{Turn: 1, Step: 1, CallID: id, Name: name, Arguments: args})
	return session.Event{Type: session.KindToolCall, Data: b}
}

func result(id string, isError bool) session.Event {
	b, _ := json.Marshal(map[string]any{"turn": 1, "step": 1, "message": map[string]any{"content": []any{map[string]any{"type": "tool-result", "toolCallId": id, "isError": isError}}}})
	return session.Event{Type: session.KindToolResult, Data: b}
}

func dispatch(root, name, args string, isError bool) session.Event {
	b, _ := json.Marshal(map[string]any{"rootCallId": root, "name": name, "arguments": json.RawMessage(args), "isError": isError})
	return session.Event{Type: session.KindCodeDispatch, Data: b}
}

// The value is committed only by its authoritative result: a refused call
// records nothing, the first success wins, a nested success waits for its
// program's result, and a failed program drops it.
func TestStructuredCapture(t *testing.T) {
	for _, tc := range []struct {
		name    string
		events  []session.Event
		value   string
		pending bool
	}{
		{"nothing", nil, "", false},
		{"refused then recorded", []session.Event{call("c1", "structured_output", `{"a":1,"x":2}`), result("c1", true), call("c2", "structured_output", `{"a":2}`), result("c2", false)}, `{"a":2}`, false},
		{"another tool", []session.Event{call("c1", "bash", `{"a":1}`), result("c1", false)}, "", false},
		{"the first success wins", []session.Event{call("c1", "structured_output", `{"a":1}`), result("c1", false), call("c2", "structured_output", `{"a":2}`), result("c2", false)}, `{"a":1}`, false},
		{"a nested success waits for its program", []session.Event{call("r", "run_code", `{}`), dispatch("r", "structured_output", `{"a":3}`, false)}, "", true},
		{"a nested success its program commits", []session.Event{call("r", "run_code", `{}`), dispatch("r", "structured_output", `{"a":3}`, false), result("r", false)}, `{"a":3}`, false},
		{"a nested success its program fails", []session.Event{call("r", "run_code", `{}`), dispatch("r", "structured_output", `{"a":3}`, false), result("r", true)}, "", false},
		{"a nested refusal", []session.Event{call("r", "run_code", `{}`), dispatch("r", "structured_output", `{"a":3}`, true), result("r", false)}, "", false},
		{"arguments that are not JSON", []session.Event{call("c1", "structured_output", `{`), result("c1", false)}, "", false},
	} {
		v, pending := delegation.StructuredCapture(tc.events)
		if string(v) != tc.value || pending != tc.pending {
			t.Errorf("%s: got %s pending %v, want %s pending %v", tc.name, v, pending, tc.value, tc.pending)
		}
	}
}
