package sessionquery

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

// TestSearchOrderAndCap: hits are ordered as upstream's SQL orders them
// (more highlighted matches first, then shorter text, then later time, then
// higher seq); assistant chunks are not searched; the cap keeps the first.
func TestSearchOrderAndCap(t *testing.T) {
	l := sessiontest.New(t, "11111111-2222-4333-8444-555555555555", "/ws", session.WithClock(clock()))
	user := func(text string) (string, any, session.AppendOptions) {
		return "user/message", map[string]any{"content": []pipeline.Block{pipeline.TextBlock(text)}}, session.AppendOptions{SurfaceOp: "append"}
	}
	type ev struct {
		typ  string
		data any
		opt  session.AppendOptions
	}
	mk := func(typ string, data any, opt session.AppendOptions) ev { return ev{typ, data, opt} }
	for _, e := range []ev{
		mk("step/start", map[string]int{"turn": 1, "step": 1}, session.AppendOptions{}),
		mk(user("alpha alpha")), // 1: two matches
		mk(user("alpha")),       // 2: one match, 5 code points
		mk(user("zeta alpha")),  // 3: 10 code points
		mk(user("alpha zeta")),  // 4: 10 code points, later
		mk("assistant/chunk", map[string]any{"chunk": map[string]string{"type": "text-delta", "text": "alpha"}}, session.AppendOptions{}),
		mk("tool/result", map[string]any{"message": map[string]any{"content": []pipeline.Block{pipeline.TextBlock("alpha")}}, "error": map[string]string{"name": "E", "code": "C"}}, session.AppendOptions{SurfaceOp: "append"}), // 6: "alpha\nE\nC"
		mk("step/start", map[string]int{"turn": 1, "step": 2}, session.AppendOptions{}),
	} {
		if _, err := l.AppendWith(e.typ, e.data, e.opt); err != nil {
			t.Fatal(err)
		}
	}
	agent := &pipeline.Agent{ID: "root", Session: l}
	seqs := func(text string) []string {
		var out []string
		for _, line := range strings.Split(text, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[1] == "seq" {
				out = append(out, f[2])
			}
		}
		return out
	}
	res := runCfg(t, Config{}, agent, SearchName, `{"query":"alpha"}`)
	got := res.Text()
	var value string
	if json.Unmarshal(res.Value, &value) != nil || value != got {
		t.Errorf("value %s, want the text as a JSON string", res.Value)
	}
	if s := strings.Join(seqs(got), ","); s != "1,2,6,4,3" {
		t.Errorf("hit order %s, want 1,2,6,4,3:\n%s", s, got)
	}
	got = runCfg(t, Config{MaxSearchResults: 2}, agent, SearchName, `{"query":"alpha"}`).Text()
	if s := strings.Join(seqs(got), ","); s != "1,2" || !strings.HasSuffix(got, "\n\nResult cap reached. Narrow the query or add filters to find additional matches.") {
		t.Errorf("capped search:\n%s", got)
	}
	got = runCfg(t, Config{MaxSearchResults: 5}, agent, SearchName, `{"query":"alpha"}`).Text()
	if strings.Contains(got, "Result cap reached") {
		t.Errorf("exactly the cap is not capped:\n%s", got)
	}
}

func TestPhraseSpans(t *testing.T) {
	tests := []struct {
		text, query string
		want        []span
	}{
		{"echo MARKER_QZX", "marker_qzx", []span{{5, 15}}},
		{"alpha alpha", "alpha", []span{{0, 5}, {6, 11}}},     // adjacent instances stay apart
		{"alpha alpha alpha", "alpha alpha", []span{{0, 17}}}, // overlapping ones merge
		{"alpha, beta", "ALPHA beta", []span{{0, 11}}},        // separators between words do not matter
		{"beta alpha", "alpha beta", nil},                     // order matters
		{"alphabet", "alpha", nil},                            // words, not prefixes
		{"x\u00e9y", "X\u00c9Y", []span{{0, 4}}},              // Unicode lower-casing
		{"anything", "<>", nil},                               // no words: no match
		{"a\uE000b c", "a\uE000b", []span{{0, 5}}},            // private use is a word character
	}
	for _, tc := range tests {
		if got := phraseSpans(tc.text, tokenize(tc.query)); !equalSpans(got, tc.want) {
			t.Errorf("phraseSpans(%q, %q) = %v, want %v", tc.text, tc.query, got, tc.want)
		}
	}
}

func equalSpans(a, b []span) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSnippet(t *testing.T) {
	x, y := strings.Repeat, strings.Repeat
	long := x("x", 200) + " NEEDLE " + y("y", 200)
	tail := x("x", 100) + " NEEDLE " + y("y", 150)
	exact := x("é", 233) + " NEEDLE" // 240 code points
	tests := []struct{ name, text, want string }{
		{"whitespace runs become one space", "  a \n\t b \u00a0", "a b"},
		{"U+0085 is not JavaScript whitespace", "a\u0085b", "a\u0085b"},
		{"a window a third before the match", long, "…" + x("x", 79) + " NEEDLE " + y("y", 151) + "…"},
		{"a window that reaches the end", tail, "…" + x("x", 81) + " NEEDLE " + y("y", 150)},
		{"240 code points are not cut", exact, exact},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := snippet(tc.text, phraseSpans(tc.text, tokenize("needle"))); got != tc.want {
				t.Errorf("snippet = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSemanticText(t *testing.T) {
	tests := []struct{ typ, data, want string }{
		{"tool/call", `{"name":"bash","arguments":" {\"a\":1} "}`, "bash\n{\"a\":1}"},
		{"assistant/message", `{"message":{"content":[{"type":"reasoning","text":"hidden"},{"type":"text","text":" hi "},{"type":"tool-call","name":"bash","arguments":"{}"}]}}`, "hi\nbash\n{}"},
		{"user/message", `{"content":[{"type":"text","text":"  "},{"type":"tool-result","content":[{"type":"text","text":"inner"}]}]}`, "inner"},
		{"tool/result", `{"message":{"content":[{"type":"text","text":"out\n"}]},"error":{"name":"ToolArgsError","code":"INVALID_ARGS"}}`, "out\nToolArgsError\nINVALID_ARGS"},
		{"todo/write", `{"todos":[{"status":"pending","content":"do it"}]}`, "pending\ndo it"},
		{"turn/end", `{"reason":{"kind":"error","error":{"message":"boom"}}}`, "error\nboom"},
		{"turn/end", `{"reason":{"kind":"interrupted"}}`, "interrupted"},
		{"turn/end", `{"reason":{"kind":"completed"}}`, ""},
		{"assistant/chunk", `{"chunk":{"type":"text-delta","text":"x"}}`, ""},
		{"session/title", `{"title":"x"}`, ""},
	}
	for _, tc := range tests {
		if got := SemanticText(session.Event{Type: tc.typ, Data: json.RawMessage(tc.data)}); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.typ, tc.data, got, tc.want)
		}
	}
}
