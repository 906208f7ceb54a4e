package replay

import (
	"encoding/json"
	"testing"
)

// TestThrownFailure: an error finish the loop throws is upstream's
// LlmError: its constructor refuses a field of the wrong shape, checked
// in its order (message, code, status, providerRetryAfterMs, requestId;
// null is present), and the turn fails with that text, code UNKNOWN;
// else the failure keeps its five fields alone, in that order. Planted
// bugs caught: null read as absent, a status of 99 or 600 or 200.5
// accepted, a zero Retry-After accepted, the order of the checks
// changed, a key of the model's own kept.
func TestThrownFailure(t *testing.T) {
	const after = "LlmError providerRetryAfterMs must be a positive finite number"
	const status = "LlmError status must be an integer from 100 through 599"
	for _, tc := range []struct{ failure, want string }{
		{`{"message":"m","code":"AUTH","providerRetryAfterMs":null}`, after},
		{`{"message":"m","code":"AUTH","providerRetryAfterMs":0}`, after},
		{`{"message":"m","code":"AUTH","providerRetryAfterMs":-1}`, after},
		{`{"message":"m","code":"AUTH","providerRetryAfterMs":"5"}`, after},
		{`{"message":"m","code":"AUTH","providerRetryAfterMs":1e999}`, after},
		{`{"message":"m","code":"AUTH","status":"500"}`, status},
		{`{"message":"m","code":"AUTH","status":99}`, status},
		{`{"message":"m","code":"AUTH","status":600}`, status},
		{`{"message":"m","code":"AUTH","status":200.5}`, status},
		{`{"message":"m","code":"AUTH","requestId":""}`, "LlmError requestId must be a non-empty string"},
		{`{"message":"m","code":"AUTH","requestId":7,"status":99}`, status},
		{`{"code":"AUTH","status":99}`, "LlmError message must be a non-empty string"},
		{`{"message":"m","code":5,"status":99}`, "LlmError code must be a non-empty string"},
		{`{"message":"m","code":"AUTH","status":600,"providerRetryAfterMs":-1}`, status},
	} {
		f := thrownFailure(json.RawMessage(tc.failure), nil)
		if got, _ := json.Marshal(f); f.Message != tc.want || f.Code != "UNKNOWN" || string(got) != `{"message":"`+tc.want+`","code":"UNKNOWN"}` {
			t.Errorf("%s: %s, want %q (UNKNOWN)", tc.failure, got, tc.want)
		}
	}
	for _, tc := range []struct{ failure, want string }{
		{`{"extra":null,"requestId":"r","providerRetryAfterMs":1.5,"status":100,"code":"AUTH","message":"m"}`, `{"message":"m","code":"AUTH","status":100,"providerRetryAfterMs":1.5,"requestId":"r"}`},
		{`{"message":"m","code":"SERVER","status":599,"providerRetryAfterMs":5e-324}`, `{"message":"m","code":"SERVER","status":599,"providerRetryAfterMs":5e-324}`},
	} {
		if got, _ := json.Marshal(thrownFailure(json.RawMessage(tc.failure), nil)); string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.failure, got, tc.want)
		}
	}
}
