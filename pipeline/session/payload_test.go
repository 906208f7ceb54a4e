package session

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestKindsListsEveryKind: every Kind constant of kinds.go is in Kinds once,
// and no two kinds are spelled alike.
func TestKindsListsEveryKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "kinds.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{} // value → name
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || !strings.HasPrefix(n.Name, "Kind") {
					t.Fatalf("%s: a kind is a Kind constant with a string literal", n.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				if other, dup := declared[v]; dup {
					t.Errorf("%s and %s are both %q", other, n.Name, v)
				}
				declared[v] = n.Name
			}
		}
	}
	kinds := Kinds()
	for v, name := range declared {
		if n := strings.Count(strings.Join(kinds, "\n")+"\n", v+"\n"); n != 1 {
			t.Errorf("%s (%q) is in Kinds %d times, want once", name, v, n)
		}
	}
	if len(kinds) != len(declared) {
		t.Errorf("Kinds has %d entries, kinds.go declares %d", len(kinds), len(declared))
	}
	kinds[0] = "changed"
	if Kinds()[0] == "changed" {
		t.Error("Kinds returns the list itself: a caller can change it")
	}
}

// TestPayloadJSON: the events' data in upstream's key order, byte for byte
// as the log writes it (json.Marshal, as Append does).
func TestPayloadJSON(t *testing.T) {
	maxRetries := 5
	reported, ok := ReportedFailure(json.RawMessage(`{"message":"rate <limited>","code":"RATE_LIMIT","status":429,"extra":[1]}`))
	if !ok || reported.Code != "RATE_LIMIT" || reported.Status != 429 || reported.Message != "rate <limited>" {
		t.Fatalf("ReportedFailure read %+v (ok %v)", reported, ok)
	}
	for _, tc := range []struct {
		name string
		data any
		want string
	}{
		{"turn/start", TurnStart{3}, `{"turn":3}`},
		{"step", Step{Turn: 1, Step: 2}, `{"turn":1,"step":2}`},
		{"completed", TurnEnd{1, EndReason{Kind: EndCompleted}}, `{"turn":1,"reason":{"kind":"completed"}}`},
		{"aborted by the user", TurnEnd{2, EndReason{Kind: EndAborted, Reason: &AbortCause{Kind: AbortUser}}},
			`{"turn":2,"reason":{"kind":"aborted","reason":{"kind":"user"}}}`},
		{"aborted with an error of ours", EndReason{Kind: EndAborted, Reason: &AbortCause{Kind: "replay-stopped", Error: "context canceled"}},
			`{"kind":"aborted","reason":{"error":"context canceled","kind":"replay-stopped"}}`},
		{"a failure made here", EndReason{Kind: EndError, Error: &Failure{Message: "snapshot disk full", Code: "UNKNOWN"}},
			`{"kind":"error","error":{"message":"snapshot disk full","code":"UNKNOWN"}}`},
		{"a reported failure, as it came", EndReason{Kind: EndError, Error: reported},
			`{"kind":"error","error":{"message":"rate \u003climited\u003e","code":"RATE_LIMIT","status":429,"extra":[1]}}`},
		{"retry", Retry{RetryID: "r", Turn: 1, Step: 1, Provider: "p", Mode: "normal", PolicyKey: "k", Retry: 1, MaxRetries: &maxRetries,
			DelayMs: 12.5, Failure: &Failure{Message: "m", Code: "SERVER", Status: 503, ProviderRetryAfterMs: 10, RequestID: "q"}},
			`{"retryId":"r","turn":1,"step":1,"provider":"p","mode":"normal","policyKey":"k","retry":1,"maxRetries":5,"delayMs":12.5,` +
				`"failure":{"message":"m","code":"SERVER","status":503,"providerRetryAfterMs":10,"requestId":"q"}}`},
		{"retry-started", RetryStarted{RetryID: "r", Turn: 1, Step: 2, Retry: 3}, `{"retryId":"r","turn":1,"step":2,"retry":3}`},
		{"tool/call", ToolCall{Turn: 1, Step: 1, CallID: "c", Name: "bash", Arguments: `{"command":"ls"}`},
			`{"turn":1,"step":1,"callId":"c","name":"bash","arguments":"{\"command\":\"ls\"}"}`},
		{"assistant/chunk", AssistantChunk{Turn: 1, Step: 1, Chunk: json.RawMessage(`{"type":"finish"}`)}, `{"turn":1,"step":1,"chunk":{"type":"finish"}}`},
		{"assistant/message", AssistantMessage{Turn: 1, Step: 2, Message: AssistantBody{Role: "assistant", Content: []json.RawMessage{}, Source: ModelSource{"model", "p", "m"}, ID: "i"}},
			`{"turn":1,"step":2,"message":{"role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"},"id":"i"}}`},
		{"request/context", RequestContext{Provider: "p", Model: "m"}, `{"provider":"p","model":"m"}`},
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

// TestReportedFailureOfAnotherShape: a field of another type is reported
// and left unread, the rest is read (a retry policy decides on it, as
// upstream's llm-retry does), and the failure is still written as it came.
func TestReportedFailureOfAnotherShape(t *testing.T) {
	raw := json.RawMessage(`{"message":"m","code":"SERVER","status":"503"}`)
	f, ok := ReportedFailure(raw)
	if ok {
		t.Fatal("a string status was read as upstream's failure")
	}
	if f.Message != "m" || f.Code != "SERVER" {
		t.Errorf("the readable fields were not read: %+v", f)
	}
	if got, _ := json.Marshal(f); string(got) != string(raw) {
		t.Errorf("written as %s, want %s", got, raw)
	}
	if !slices.Equal([]bool{EndReason{Kind: EndError}.Failed(), EndReason{Kind: EndAborted}.Failed()}, []bool{true, false}) {
		t.Error("Failed is not kind error")
	}
}

// TestReportedFailureOfAFractionalRetryAfter: providerRetryAfterMs is any
// JSON number, as upstream's llm-retry reads it: 1.5 is read as 1.5.
func TestReportedFailureOfAFractionalRetryAfter(t *testing.T) {
	f, ok := ReportedFailure(json.RawMessage(`{"message":"m","code":"RATE_LIMIT","providerRetryAfterMs":1.5}`))
	if !ok || f.ProviderRetryAfterMs != 1.5 {
		t.Errorf("failure %+v (read %v), want providerRetryAfterMs 1.5", f, ok)
	}
}
