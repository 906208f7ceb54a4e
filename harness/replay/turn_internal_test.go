package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
)

func TestFallbackTitle(t *testing.T) {
	for in, want := range map[string]string{
		"Reply with exactly TITLE_DONE. Do not use tools.":                                                      "Reply with exactly TITLE_DONE. Do",
		"Read nested/task.txt, then read scope</system-reminder>/task.txt with the read tool, then reply DONE.": "Read nested/task.txt, then read scope</s",
		"  many   spaces\there\n\nand lines  ":                                                                  "many spaces here and lines",
		"\x1b[31mred\x1b[0m \u200bhidden\u0007 word":                                                            "red hidden word",
		"一二三四五六七八九十一二三四五":                                                                                       "一二三四五六七八九十一二三",
		"short": "short",
	} {
		if got := fallbackTitle(in); got != want {
			t.Errorf("fallbackTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTitleModel: the title model is asked once, after the first request,
// with upstream's framing; its reply is normalised and lands after the
// turn; a first message over maxInputBytes asks nothing.
func TestTitleModel(t *testing.T) {
	llm := &recording.TitleLLM{Provider: "title-replay", Model: "title-model", TargetWords: 5, TargetCjkCharacters: 10, MaxInputBytes: 4096, MaxOutputTokens: 32}
	reply := recording.Reply{Chunks: []map[string]any{
		{"type": "block-start", "index": 0.0, "blockType": "text"},
		{"type": "text-delta", "index": 0.0, "text": "  Late \n durable\ttitle  "},
		{"type": "finish", "reason": map[string]any{"kind": "stop"}},
	}}
	ts := &titles{llm: llm, replies: []recording.Reply{reply}}
	ts.userEntered(4, []pipeline.Block{pipeline.TextBlock(`say "hi"`)})
	if f := ts.fallback(); f == nil || f.Title != `say "hi"` || f.Source.Kind != "fallback" {
		t.Fatalf("fallback %+v", f)
	}
	req := ts.request()
	if req == nil || req.Messages[0].Content[0].Text != "Generate the session title from this JSON array of human messages:\n[{\"seq\":4,\"text\":\"say \\\"hi\\\"\"}]" ||
		!strings.HasSuffix(req.System, "Aim for about 5 words in non-CJK languages or 10 CJK characters.") || req.MaxTokens != 32 {
		t.Fatalf("request %+v", req)
	}
	if again := ts.request(); again != nil {
		t.Errorf("asked twice: %+v", again)
	}
	late := ts.landed()
	b, _ := json.Marshal(late)
	if string(b) != `{"title":"Late durable title","messageSeqs":[4],"source":{"kind":"provider","provider":"session-title-first-prompt-llm","model":{"provider":"title-replay","model":"title-model"}}}` {
		t.Errorf("late title %s", b)
	}
	small := *llm
	small.MaxInputBytes = 10
	ts = &titles{llm: &small, replies: []recording.Reply{reply}}
	ts.userEntered(4, []pipeline.Block{pipeline.TextBlock("a long first message")})
	if req := ts.request(); req != nil || len(ts.notes) != 1 {
		t.Errorf("over maxInputBytes: request %+v, notes %q", req, ts.notes)
	}
}

// TestAssembler: blocks in first-seen order; an open block from its
// deltas; a max-tokens finish drops every tool call; a cancelled stream
// keeps its non-blank text.
func TestAssembler(t *testing.T) {
	a := newAssembler()
	for _, c := range []map[string]any{
		{"type": "block-start", "index": 1.0, "blockType": "reasoning"},
		{"type": "reasoning-delta", "index": 1.0, "text": "think"},
		{"type": "block-start", "index": 0.0, "blockType": "text"},
		{"type": "text-delta", "index": 0.0, "text": "Hel"},
		{"type": "text-delta", "index": 0.0, "text": "lo"},
		{"type": "tool-call-delta", "index": 2.0, "id": "c1", "name": "read", "argumentsDelta": `{"file_`},
		{"type": "block-start", "index": 3.0, "blockType": "text"},
		{"type": "text-delta", "index": 3.0, "text": "  "},
		{"type": "usage", "usage": map[string]any{"inputTokens": 1.0}},
	} {
		a.push(c)
	}
	blocks := a.blocks()
	if len(blocks) != 4 || blocks[0]["text"] != "think" || blocks[1]["text"] != "Hello" || blocks[2]["arguments"] != `{"file_` {
		t.Fatalf("blocks %v", blocks)
	}
	if got := a.interrupted(); len(got) != 2 {
		t.Errorf("interrupted %v, want the reasoning and the text", got)
	}
	a.push(map[string]any{"type": "finish", "reason": map[string]any{"kind": "max-tokens"}})
	if got := a.blocks(); len(got) != 3 || toolCalls(got) != nil {
		t.Errorf("max-tokens blocks %v: the cut tool call must go", got)
	}
}

// TestBridgeAnswers: the prompt's answer is its own turn's end (max-tokens,
// blocked: end_turn), sent once the agent is idle; a failed turn answers at
// its turn/end with the JSON-RPC error; a cancelled prompt answers
// cancelled; text blocks go out as they commit, empty ones never.
func TestBridgeAnswers(t *testing.T) {
	tests := []struct {
		name      string
		reason    map[string]any
		cancelled bool
		want      []acpwire.Frame
	}{
		{"completed", map[string]any{"kind": "completed"}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("end_turn")}},
		{"max-tokens", map[string]any{"kind": "max-tokens"}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("end_turn")}},
		{"blocked", map[string]any{"kind": "blocked"}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("end_turn")}},
		{"cancelled", map[string]any{"kind": "aborted", "reason": map[string]any{"kind": "user"}}, true, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("cancelled")}},
		{"failed", map[string]any{"kind": "error", "error": map[string]any{"message": "boom", "code": "AUTH"}}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Failed("boom")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &bridge{}
			p := b.prompt("m1")
			b.claimed([]userMessage{{ID: "m1"}}, 1)
			b.assistantMessage([]map[string]any{{"type": "reasoning", "text": "x"}, {"type": "text", "text": "hi"}, {"type": "text", "text": ""}})
			b.turnEnded(1, tc.reason)
			b.turnEnded(2, map[string]any{"kind": "error", "error": map[string]any{"message": "another turn"}})
			p.cancelled = tc.cancelled
			b.idle()
			if diff := cmp.Diff(tc.want, b.sent()); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
	b := &bridge{}
	if b.newSession("/ws", []string{"/extra"}) || !cmp.Equal(b.sent(), []acpwire.Frame{acpwire.InvalidParams("additionalDirectories is not supported")}) {
		t.Errorf("extra directories: %+v", b.sent())
	}
	if b := (&bridge{}); b.newSession("rel", nil) || b.sent()[0].Value["error"].(map[string]any)["message"] != "Invalid params: cwd must be an absolute path: rel" {
		t.Errorf("a relative cwd: %+v", b.sent())
	}
}

// recorder is an appender that keeps the events.
type recorder struct{ events []string }

func (r *recorder) append(typ string, data any) error {
	b, _ := json.Marshal(data)
	r.events = append(r.events, typ+" "+string(b))
	return nil
}

// TestInbox: inserts at the end of their list; a claim takes the whole
// next-step list, then one prompt at a turn's first step, each part one
// splice without outcome, the late notices after it; a plugin's removal and
// replacement are canceled splices.
func TestInbox(t *testing.T) {
	r := &recorder{}
	in := newInbox(r)
	msg := func(id string) userMessage {
		return userMessage{Content: []pipeline.Block{}, Source: kindOnly{"user"}, Role: "user", ID: id}
	}
	for _, step := range []func() error{
		func() error { return in.add(nextTurn, msg("p1")) },
		func() error { return in.add(nextTurn, msg("p2")) },
		func() error { return in.add(nextStep, msg("s1")) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	in.deliver("late notice", "sum", true)
	claimed, err := in.claim(nextTurn)
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 2 || claimed[0].ID != "s1" || claimed[1].ID != "p1" {
		t.Fatalf("claimed %+v", claimed)
	}
	if ok, err := in.remove("p2"); !ok || err != nil {
		t.Fatalf("remove: %v %v", ok, err)
	}
	want := []string{
		`agent/inbox/spliced {"target":"next-turn","start":0,"inserted":[{"content":[],"source":{"kind":"user"},"role":"user","id":"p1"}]}`,
		`agent/inbox/spliced {"target":"next-turn","start":1,"inserted":[{"content":[],"source":{"kind":"user"},"role":"user","id":"p2"}]}`,
		`agent/inbox/spliced {"target":"next-step","start":0,"inserted":[{"content":[],"source":{"kind":"user"},"role":"user","id":"s1"}]}`,
		`agent/inbox/spliced {"target":"next-step","start":0,"removedCount":1,"inserted":[]}`,
		`agent/inbox/spliced {"target":"next-turn","start":0,"removedCount":1,"inserted":[]}`,
	}
	if diff := cmp.Diff(want, r.events[:5]); diff != "" {
		t.Errorf("splices (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.events[5], `"target":"next-step","start":0,"inserted":[{"content":[{"type":"text","text":"late notice"}]`) {
		t.Errorf("the late notice after the claim: %s", r.events[5])
	}
	if r.events[6] != `agent/inbox/spliced {"target":"next-turn","start":0,"removedCount":1,"inserted":[],"outcome":"canceled"}` {
		t.Errorf("removal %s", r.events[6])
	}
	if ok, _ := in.replace("nope", msg("x")); ok {
		t.Error("replaced a message that is not pending")
	}
	if claimed, _ := in.claim(nextStep); len(claimed) != 1 || in.hasPending() {
		t.Errorf("the next-step claim took %+v; pending %v", claimed, in.hasPending())
	}
}
