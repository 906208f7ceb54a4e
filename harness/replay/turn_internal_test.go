package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
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
// keeps its non-blank text; a block-end's block and the usage pass through
// in upstream's key order; a failure is read, and kept as it came.
func TestAssembler(t *testing.T) {
	a := newAssembler()
	for _, c := range []string{
		`{"type":"block-start","index":1,"blockType":"reasoning"}`,
		`{"type":"reasoning-delta","index":1,"text":"think"}`,
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"text-delta","index":0,"text":"Hel"}`,
		`{"type":"text-delta","index":0,"text":"lo"}`,
		`{"type":"tool-call-delta","index":2,"id":"c1","name":"read","argumentsDelta":"{\"file_"}`,
		`{"type":"block-start","index":3,"blockType":"text"}`,
		`{"type":"text-delta","index":3,"text":"  "}`,
		`{"type":"block-end","index":4,"block":{"text":"as given","type":"text","extra":1}}`,
		`{"type":"usage","usage":{"outputTokens":2,"inputTokens":1.0}}`,
	} {
		a.push(json.RawMessage(c))
	}
	blocks := a.blocks()
	if len(blocks) != 5 || blocks[0].Text != "think" || blocks[1].Text != "Hello" || blocks[2].Arguments != `{"file_` {
		t.Fatalf("blocks %+v", blocks)
	}
	for i, want := range []string{`{"type":"reasoning","text":"think"}`, `{"type":"text","text":"Hello"}`,
		`{"type":"tool-call","id":"c1","name":"read","arguments":"{\"file_"}`, `{"type":"text","text":"  "}`,
		`{"type":"text","text":"as given","extra":1}`} {
		if string(blocks[i].json) != want {
			t.Errorf("block %d logged as %s, want %s", i, blocks[i].json, want)
		}
	}
	if string(a.usage) != `{"inputTokens":1,"outputTokens":2}` {
		t.Errorf("usage %s", a.usage)
	}
	if got := a.interrupted(); len(got) != 3 {
		t.Errorf("interrupted %+v, want the reasoning and the two texts", got)
	}
	a.push(json.RawMessage(`{"type":"finish","reason":{"kind":"max-tokens"}}`))
	if got := a.blocks(); len(got) != 4 || toolCalls(got) != nil {
		t.Errorf("max-tokens blocks %+v: the cut tool call must go", got)
	}
	a.push(json.RawMessage(`{"type":"finish","reason":{"failure":{"code":"SERVER","status":"503","message":"m"},"kind":"error"}}`))
	f, readable := a.failure()
	if a.finishKind() != "error" || readable || f.Code != "SERVER" || string(f.Reported) != `{"message":"m","code":"SERVER","status":"503"}` {
		t.Errorf("failure %+v (readable %v), kind %q", f, readable, a.finishKind())
	}
	a.push(json.RawMessage(`{"type":"finish","reason":{"kind":"error","failure":"not an object"}}`))
	a.push(json.RawMessage(`{"type":"text-delta","index":5,"text":"a","Text":"b","TYPE":"finish"}`))
	if b := a.blocks(); b[len(b)-1].Text != "a" || a.finishKind() != "error" {
		t.Errorf("members read by another key's case: %+v, finish %q", b[len(b)-1], a.finishKind())
	}
	if f, readable := a.failure(); !readable || string(f.Reported) != `{}` {
		t.Errorf("a failure that is not an object: %+v (readable %v), want {}", f, readable)
	}
}

// TestBridgeAnswers: the prompt's answer is its own turn's end (max-tokens,
// blocked: end_turn), sent once the agent is idle; a failed turn answers at
// its turn/end with the JSON-RPC error; a cancelled prompt answers
// cancelled; text blocks go out as they commit, empty ones never.
func TestBridgeAnswers(t *testing.T) {
	tests := []struct {
		name      string
		reason    session.EndReason
		cancelled bool
		want      []acpwire.Frame
	}{
		{"completed", session.EndReason{Kind: "completed"}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("end_turn")}},
		{"max-tokens", session.EndReason{Kind: "max-tokens"}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("end_turn")}},
		{"blocked", session.EndReason{Kind: "blocked"}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("end_turn")}},
		{"interrupted", session.EndReason{Kind: "interrupted"}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("cancelled")}},
		{"cancelled", session.EndReason{Kind: "aborted", Reason: &session.AbortCause{Kind: "user"}}, true, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Stop("cancelled")}},
		{"failed", session.EndReason{Kind: "error", Error: &session.Failure{Message: "boom", Code: "AUTH"}}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Failed("boom")}},
		{"failed without a failure", session.EndReason{Kind: "error"}, false, []acpwire.Frame{acpwire.AgentText("hi"), acpwire.Failed("")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &bridge{}
			p := b.prompt("m1")
			b.claimed([]userMessage{enteredMessage("user", nil, nil, "m1")}, 1)
			b.assistantMessage([]replyBlock{{Type: "reasoning", Text: "x"}, {Type: "text", Text: "hi"}, {Type: "text", Text: ""}})
			b.turnEnded(1, tc.reason)
			b.turnEnded(2, session.EndReason{Kind: "error", Error: &session.Failure{Message: "another turn"}})
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

func (r *recorder) append(kind string, data any) error {
	b, _ := json.Marshal(data)
	r.events = append(r.events, kind+" "+string(b))
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
		return enteredMessage("user", kindOnly{"user"}, []pipeline.Block{}, id)
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
