package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// TestEventJSON: tool/result's and user/message's data in upstream's key
// order, byte for byte as the log writes them (json.Marshal).
func TestEventJSON(t *testing.T) {
	failed := pipeline.Result{IsError: true, Content: []pipeline.Block{pipeline.TextBlock("no <such> file")},
		Error: &pipeline.ResultError{Message: "m", Info: &pipeline.ErrorInfo{Name: "FsError", Code: "ENOENT"}}, Meta: json.RawMessage(`{"a":1}`)}
	for _, tc := range []struct {
		name string
		data any
		want string
	}{
		{"a result without content", pipeline.NewToolResultEvent(1, 2, "c1", "id", pipeline.Result{}, nil),
			`{"turn":1,"step":2,"message":{"source":{"kind":"tool","callId":"c1"},"content":[{"type":"tool-result","toolCallId":"c1","content":[],"isError":false}],"role":"user","id":"id"}}`},
		{"a failed result with meta and sandbox facts", pipeline.NewToolResultEvent(1, 1, "c", "id", failed, json.RawMessage(`{"mode":"read-only","denied":false}`)),
			`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c",` +
				`"content":[{"type":"text","text":"no \u003csuch\u003e file"}],"isError":true}],"role":"user","id":"id"},` +
				`"error":{"name":"FsError","code":"ENOENT"},"meta":{"a":1},"sandbox":{"mode":"read-only","denied":false}}`},
		{"an error without info", pipeline.NewToolResultEvent(1, 1, "c", "id", pipeline.Result{IsError: true, Error: &pipeline.ResultError{Message: "m"}}, nil),
			`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[],"isError":true}],"role":"user","id":"id"}}`},
		{"user/message", pipeline.UserMessage[map[string]string]{Content: []pipeline.Block{pipeline.TextBlock("hi")}, Source: map[string]string{"kind": "user"}, Role: "user", ID: "i"},
			`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"i"}`},
	} {
		got, err := json.Marshal(tc.data)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
