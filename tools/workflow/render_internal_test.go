package workflow

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRenderClipsInUTF16Units: the return value is JSON indented by two,
// clipped at maxResultChars UTF-16 code units (an emoji counts two) with
// upstream's truncation line; one agent is "1 agent". Planted bugs caught:
// clipping in bytes or runes, "1 agents".
func TestRenderClipsInUTF16Units(t *testing.T) {
	r := &runState{w: &tool{cfg: Config{MaxResultChars: 10}}, name: "w"}
	got, err := r.render(json.RawMessage(`"😀😀😀😀😀😀"`), 1)
	if err != nil {
		t.Fatal(err)
	}
	// "\"😀😀😀😀😀😀\"" is 14 units: the quote and four emoji and a half
	// fit in 10; the half is cut, leaving a lone surrogate's replacement.
	want := "workflow \"w\" completed (1 agent).\nReturn value:\n\"😀😀😀😀\uFFFD\n… [truncated: 4 more characters]"
	if got != want {
		t.Errorf("render\n got %q\nwant %q", got, want)
	}
	r.w.cfg.MaxResultChars = 0
	got, _ = r.render(json.RawMessage(`{"a":[1,2]}`), 2)
	if !strings.HasSuffix(got, "(2 agents).\nReturn value:\n{\n  \"a\": [\n    1,\n    2\n  ]\n}") {
		t.Errorf("render %q", got)
	}
}
