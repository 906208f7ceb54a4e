package sessionquery

import (
	"testing"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// TestUpstreamView: the sandbox facts our stack logs beside a result (a
// tool/result's or a nested call's settle event's data.sandbox) are left
// out of the event the model reads, the other keys in their order; any
// other event, and a sandbox key of another event type, is read whole.
func TestUpstreamView(t *testing.T) {
	tests := []struct{ typ, in, want string }{
		{"tool/result", `{"type":"tool/result","data":{"turn":1,"message":{"x":1},"sandbox":{"mode":"read-only","denied":false},"meta":{"m":2}}}`,
			`{"type":"tool/result","data":{"turn":1,"message":{"x":1},"meta":{"m":2}}}`},
		{"tool/code-dispatch", `{"type":"tool/code-dispatch","data":{"isError":false,"sandbox":{"mode":"read-only"}}}`,
			`{"type":"tool/code-dispatch","data":{"isError":false}}`},
		{"user/message", `{"type":"user/message","data":{"sandbox":1}}`, `{"type":"user/message","data":{"sandbox":1}}`},
		{"tool/result", `{"type":"tool/result","data":[1]}`, `{"type":"tool/result","data":[1]}`},
	}
	for _, tc := range tests {
		v, err := jsjson.Parse([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		UpstreamView(tc.typ, v)
		if got := jsjson.Stringify(v); got != tc.want {
			t.Errorf("UpstreamView(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
