package deepseek

import (
	"encoding/json"
	"strings"
	"testing"
)

// chunksJSON translates payloads (the last one may be [DONE]) and renders
// the chunks one JSON object per line.
func chunksJSON(t *testing.T, payloads ...string) string {
	t.Helper()
	tr := &Translator{}
	var lines []string
	for _, p := range payloads {
		if p == "[DONE]" {
			for _, c := range tr.Done() {
				b, err := json.Marshal(c)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, string(b))
			}
			continue
		}
		cs, err := tr.Feed(p)
		if err != nil {
			lines = append(lines, "error: "+err.Error())
			continue
		}
		for _, c := range cs {
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(b))
		}
	}
	return strings.Join(lines, "\n")
}

func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		payloads []string
		want     []string
	}{{
		name: "reasoning then text, usage on the finish chunk",
		payloads: []string{
			`{"choices":[{"delta":{"reasoning_content":"Think"}}]}`,
			`{"choices":[{"delta":{"reasoning_content":"","content":"DO"}}]}`,
			`{"choices":[{"delta":{"content":"NE"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_cache_hit_tokens":4,"completion_tokens_details":{"reasoning_tokens":2}}}`,
			"[DONE]"},
		want: []string{
			`{"type":"block-start","index":0,"blockType":"reasoning"}`,
			`{"type":"reasoning-delta","index":0,"text":"Think"}`,
			`{"type":"block-start","index":1,"blockType":"text"}`,
			`{"type":"text-delta","index":1,"text":"DO"}`,
			`{"type":"text-delta","index":1,"text":"NE"}`,
			`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"Think"}}`,
			`{"type":"block-end","index":1,"block":{"type":"text","text":"DONE"}}`,
			`{"type":"usage","usage":{"inputTokens":6,"outputTokens":5,"cacheReadTokens":4,"reasoningTokens":2}}`,
			`{"type":"finish","reason":{"kind":"stop"}}`,
		},
	}, {
		name: "tool-call arguments split across chunks, two calls, trailing usage chunk",
		payloads: []string{
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"bash","arguments":""}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\""}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_1","function":{"name":"read"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\"ls\"}"}}]},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}}`,
			"[DONE]"},
		want: []string{
			`{"type":"block-start","index":0,"blockType":"tool-call"}`,
			`{"type":"tool-call-delta","index":0,"id":"call_0","name":"bash","argumentsDelta":""}`,
			`{"type":"tool-call-delta","index":0,"id":"call_0","name":"bash","argumentsDelta":"{\"command\""}`,
			`{"type":"block-start","index":1,"blockType":"tool-call"}`,
			`{"type":"tool-call-delta","index":1,"id":"","argumentsDelta":"{}"}`,
			`{"type":"tool-call-delta","index":1,"id":"call_1","name":"read","argumentsDelta":""}`,
			`{"type":"tool-call-delta","index":0,"id":"call_0","name":"bash","argumentsDelta":":\"ls\"}"}`,
			`{"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_0","name":"bash","arguments":"{\"command\":\"ls\"}"}}`,
			`{"type":"block-end","index":1,"block":{"type":"tool-call","id":"call_1","name":"read","arguments":"{}"}}`,
			`{"type":"usage","usage":{"inputTokens":7,"outputTokens":3,"cacheReadTokens":0}}`,
			`{"type":"finish","reason":{"kind":"tool-calls"}}`,
		},
	}, {
		name:     "a stop with no block is an empty response",
		payloads: []string{`{"choices":[{"delta":{"content":""},"finish_reason":"stop"}]}`, "[DONE]"},
		want:     []string{`{"type":"finish","reason":{"kind":"error","failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}}`},
	}, {
		name:     "length is max-tokens, an unknown reason an error",
		payloads: []string{`{"choices":[{"delta":{"content":"x"},"finish_reason":"length"}]}`, `{"choices":[{"delta":{},"finish_reason":"content_filter"}]}`, "[DONE]"},
		want: []string{
			`{"type":"block-start","index":0,"blockType":"text"}`,
			`{"type":"text-delta","index":0,"text":"x"}`,
			`{"type":"block-end","index":0,"block":{"type":"text","text":"x"}}`,
			`{"type":"finish","reason":{"kind":"error","failure":{"message":"model stopped: content_filter","code":"CONTENT_FILTER"}}}`,
		},
	}, {
		name:     "a payload that is not JSON",
		payloads: []string{`{"choices":[` + strings.Repeat("x", 200)},
		want:     []string{"error: malformed SSE payload: {\"choices\":[" + strings.Repeat("x", 108) + " (MALFORMED_RESPONSE)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := chunksJSON(t, tc.payloads...)
			if want := strings.Join(tc.want, "\n"); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
