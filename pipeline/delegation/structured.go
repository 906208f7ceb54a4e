package delegation

import (
	"encoding/json"

	"github.com/dshsim/dshsim/pipeline/session"
)

// StructuredOutputTool is the tool a child with an output schema calls to
// finish (VERBATIM).
const StructuredOutputTool = "structured_output"

// StructuredCapture reads what a structured child recorded from its own
// events, as upstream's capture commits it: the arguments of its first
// structured_output call whose authoritative result succeeded (a
// model-direct call: its tool/result; a run_code program's nested call:
// its tool/code-dispatch, then the enclosing run_code's tool/result).
// value is nil when nothing was recorded; pending reports a nested success
// whose program has not yet ended (its enclosing result not yet logged).
func StructuredCapture(events []session.Event) (value json.RawMessage, pending bool) {
	direct := map[string]json.RawMessage{} // model-direct calls by id
	nested := map[string]json.RawMessage{} // successful nested calls by their root call id
	for _, e := range events {
		switch e.Type {
		case session.KindToolCall:
			var c session.ToolCall
			if json.Unmarshal(e.Data, &c) == nil && c.Name == StructuredOutputTool && json.Valid([]byte(c.Arguments)) {
				direct[c.CallID] = json.RawMessage(c.Arguments)
			}
		case session.KindCodeDispatch:
			var d struct {
				RootCallID string          `json:"rootCallId"`
				Name       string          `json:"name"`
				Arguments  json.RawMessage `json:"arguments"`
				IsError    bool            `json:"isError"`
			}
			if json.Unmarshal(e.Data, &d) == nil && d.Name == StructuredOutputTool && !d.IsError && nested[d.RootCallID] == nil {
				nested[d.RootCallID] = d.Arguments
			}
		case session.KindToolResult:
			id, failed := toolResultOf(e.Data)
			if v, ok := direct[id]; ok && !failed {
				return v, false
			}
			if v, ok := nested[id]; ok {
				if !failed {
					return v, false
				}
				delete(nested, id)
			}
		}
	}
	return nil, len(nested) > 0
}

// toolResultOf is a tool/result's call id and whether it failed.
func toolResultOf(data json.RawMessage) (string, bool) {
	var r struct {
		Message struct {
			Content []struct {
				ToolCallID string `json:"toolCallId"`
				IsError    bool   `json:"isError"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &r) != nil || len(r.Message.Content) == 0 {
		return "", true
	}
	return r.Message.Content[0].ToolCallID, r.Message.Content[0].IsError
}
