package deepseek

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/llm"
)

func TestBody(t *testing.T) {
	temp := 0.5
	r := Request{Model: "m", System: "sys", ReasoningEffort: "high", Temperature: &temp, MaxTokens: 100,
		Tools: []llm.Tool{{Name: "bash", Description: "run <cmd>", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Messages: []llm.Message{
			{Role: llm.User, Content: []llm.Block{{Type: llm.Text, Text: "a"}, {Type: llm.Text, Text: "b"}}},
			{Role: llm.Assistant, Content: []llm.Block{{Type: llm.Reasoning, Text: "think"}, {Type: llm.ToolCall, ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}},
			{Role: llm.User, Content: []llm.Block{{Type: llm.ToolResult, ToolCallID: "c1", Content: []llm.Block{{Type: llm.Text, Text: ""}}}}},
			{Role: llm.User, Content: []llm.Block{{Type: llm.Text, Text: "ctx"}, {Type: llm.ToolResult, ToolCallID: "c2", Content: []llm.Block{{Type: llm.Text, Text: "out"}}}}},
		}}
	got, err := Body(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"ab"},` +
		`{"role":"assistant","content":"","reasoning_content":"think","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"(no output)"},{"role":"user","content":"ctx"},{"role":"tool","tool_call_id":"c2","content":"out"}],` +
		`"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"enabled"},"reasoning_effort":"high",` +
		`"tools":[{"type":"function","function":{"name":"bash","description":"run <cmd>","parameters":{"type":"object"}}}],"temperature":0.5,"max_tokens":100}`
	if string(got) != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	for effort, want := range map[string]string{"off": `"thinking":{"type":"disabled"},"tools"`, "": `"stream_options":{"include_usage":true},"tools"`} {
		r := Request{Model: "m", ReasoningEffort: effort, Tools: r.Tools}
		got, _ := Body(r)
		if !strings.Contains(string(got), want) || strings.Contains(string(got), "reasoning_effort") {
			t.Errorf("effort %q: %s", effort, got)
		}
	}
	if _, err := Body(Request{Thinking: "disabled", ReasoningEffort: "max"}); err == nil {
		t.Error("an effort with thinking disabled was sent")
	}
}

func TestHTTPCode(t *testing.T) {
	for _, tc := range []struct {
		status int
		detail string
		want   string
	}{
		{401, "", "AUTH"}, {403, "insufficient balance", "AUTH"}, {413, "", "INVALID_REQUEST"},
		{402, "Insufficient Balance", "QUOTA"}, {429, "", "RATE_LIMIT"}, {429, "quota exceeded", "QUOTA"},
		{400, "This model's maximum context length is 65536 tokens", "CONTEXT_WINDOW_EXCEEDED"}, {400, "bad", "INVALID_REQUEST"},
		{500, "", "SERVER"}, {503, "", "SERVER"}, {499, "", "HTTP_499"}, {404, "", "HTTP_404"},
	} {
		if got := HTTPCode(tc.status, tc.detail); got != tc.want {
			t.Errorf("HTTPCode(%d, %q) = %s, want %s", tc.status, tc.detail, got, tc.want)
		}
	}
}

func TestRetryAfterMs(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for v, want := range map[string]int64{"": 0, "0": 0, "2": 2000, "x": 0, "-1": 0,
		"Thu, 03 Dec 2026 10:00:05 GMT": 5000, "Thu, 03 Dec 2026 09:59:00 GMT": 0} {
		if got := RetryAfterMs(v, now); got != want {
			t.Errorf("RetryAfterMs(%q) = %d, want %d", v, got, want)
		}
	}
}

func TestSSEReader(t *testing.T) {
	in := "\ufeff: comment\r\ndata: a\r\ndata:b\r\n\r\nevent: x\nid: 1\ndata: {}\n\ndata: [DONE]\n\ndata: pending"
	pulses := 0
	r := newSSEReader(strings.NewReader(in), func() { pulses++ })
	var got []string
	for {
		d, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if strings.Join(got, "|") != "a\nb|{}|[DONE]" {
		t.Errorf("events %q (the last one, with no blank line after it, must not be dispatched)", got)
	}
	if pulses == 0 {
		t.Error("lines did not count as activity")
	}
}

func TestKey(t *testing.T) {
	for v, want := range map[string]string{"": "MISSING_CREDENTIAL", "   ": "INVALID_CREDENTIAL", "sk-ü": "INVALID_CREDENTIAL", " sk-ok ": ""} {
		c := &Client{KeyEnv: "K", LookupKey: func(string) (string, bool) { return v, true }}
		key, err := c.Key()
		switch f, _ := err.(*llm.Failure); {
		case want == "" && (err != nil || key != "sk-ok"):
			t.Errorf("%q: key %q, %v", v, key, err)
		case want != "" && (f == nil || f.Code != want || !strings.Contains(f.Message, "K") || (v != "" && strings.Contains(f.Message, v))):
			t.Errorf("%q: %v, want %s naming K and not the value", v, err, want)
		}
	}
}
