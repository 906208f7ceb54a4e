package acpwire

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	initLine  = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"deepseek-harness-acp","version":"0.0.1"},"agentCapabilities":{"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false}},"authMethods":[]}}`
	newLine   = `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"{{sessionId}}"}}`
	permLine  = `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"{{sessionId}}","toolCall":{"toolCallId":"call_a"},"options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}}`
	chunkLine = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"DONE"}}}}`
	endLine   = `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`
	cancLine  = `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}`
	errLine   = `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error: turn failed: simulated provider error (HTTP 401)"}}`
	dirsLine  = `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: additionalDirectories is not supported"}}`
	toolLine  = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{"sessionUpdate":"tool_call","toolCallId":"call_a"}}}`
	planLine  = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{"sessionUpdate":"plan"}}}`
)

func classify(t *testing.T, lines ...string) []Line {
	t.Helper()
	raw := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		raw[i] = json.RawMessage(l)
	}
	out, err := Classify(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestClassify(t *testing.T) {
	got := classify(t, initLine, newLine, permLine, chunkLine, endLine, errLine, toolLine, planLine)
	want := []Kind{Initialize, NewSession, Permission, MessageChunk, StopReason, PromptError, ToolCall, "session/update plan"}
	for i, l := range got {
		if l.Kind != want[i] || l.N != i+1 {
			t.Errorf("line %d: kind %q (N %d), want %q", i+1, l.Kind, l.N, want[i])
		}
	}
	if _, err := Classify([]json.RawMessage{json.RawMessage(`{"jsonrpc":`)}); err == nil || !strings.HasPrefix(err.Error(), "line 1: ") {
		t.Errorf("a torn line: %v", err)
	}
}

func TestCompare(t *testing.T) {
	hello := []Frame{Initialized(false), SessionCreated()}
	with := func(fs ...Frame) []Frame { return append(append([]Frame(nil), hello...), fs...) }
	tests := []struct {
		name     string
		lines    []string
		ours     []Frame
		problems []string // substrings, in order; none means a match
	}{
		{name: "a plain turn", lines: []string{initLine, newLine, chunkLine, endLine}, ours: with(AgentText("DONE"), Stop("end_turn"))},
		{name: "a prompt with a permission request (ids ignored)", lines: []string{initLine, newLine, permLine, chunkLine, endLine},
			ours: with(PermissionRequest("call_a"), AgentText("DONE"), Stop("end_turn"))},
		{name: "image prompts advertised where the recording does not", lines: []string{initLine}, ours: []Frame{Initialized(true)},
			problems: []string{"stdout.expected.jsonl:1: initialize result: result.agentCapabilities.promptCapabilities.image: expected false, got true"}},
		{name: "a field only in ours (agentInfo deleted from the recording)", lines: []string{strings.Replace(initLine, `"agentInfo":{"name":"deepseek-harness-acp","version":"0.0.1"},`, "", 1)}, ours: []Frame{Initialized(false)},
			problems: []string{`stdout.expected.jsonl:1: initialize result: result.agentInfo: expected (absent), got {"name":"deepseek-harness-acp","version":"0.0.1"} (not in the recording)`}},
		{name: "a session/new refused", lines: []string{initLine, dirsLine}, ours: []Frame{Initialized(false), InvalidParams("additionalDirectories is not supported")}},
		{name: "a session created where the recording refused it", lines: []string{initLine, dirsLine}, ours: hello,
			problems: []string{"stdout.expected.jsonl:2: expected a prompt error (JSON-RPC error), the replay sent a session/new result"}},
		{name: "another text", lines: []string{initLine, newLine, chunkLine, endLine}, ours: with(AgentText("DONE!"), Stop("end_turn")),
			problems: []string{`stdout.expected.jsonl:3: session/update agent_message_chunk: params.update.content.text: expected "DONE", got "DONE!"`}},
		{name: "text after the answer", lines: []string{initLine, newLine, chunkLine, endLine}, ours: with(Stop("end_turn"), AgentText("DONE")),
			problems: []string{"stdout.expected.jsonl:3: expected a session/update agent_message_chunk, the replay sent a prompt result (stopReason)"}},
		{name: "another call asked", lines: []string{initLine, newLine, permLine, endLine}, ours: with(PermissionRequest("call_b"), Stop("end_turn")),
			problems: []string{`stdout.expected.jsonl:3: session/request_permission: params.toolCall.toolCallId: expected "call_a", got "call_b"`}},
		{name: "a permission request the replay never raised", lines: []string{initLine, newLine, permLine, endLine}, ours: with(Stop("end_turn")),
			problems: []string{"stdout.expected.jsonl:3: expected a session/request_permission, the replay sent a prompt result (stopReason)", "4 compared lines, the replay sent 3 frames"}},
		{name: "a frame the recording does not show", lines: []string{initLine, newLine, endLine}, ours: with(Stop("end_turn"), Stop("end_turn")),
			problems: []string{"the replay sent a prompt result (stopReason) the recording does not show", "3 compared lines, the replay sent 4 frames"}},
		{name: "a cancelled turn that ended normally", lines: []string{initLine, newLine, cancLine}, ours: with(Stop("end_turn")),
			problems: []string{`stdout.expected.jsonl:3: prompt result (stopReason): result.stopReason: expected "cancelled", got "end_turn"`}},
		{name: "a failed prompt: its message is compared", lines: []string{initLine, newLine, errLine}, ours: with(Failed("simulated provider error (HTTP 401)"))},
		{name: "a failure of another message", lines: []string{initLine, newLine, errLine}, ours: with(Failed("other")),
			problems: []string{`error.message: expected "Internal error: turn failed: simulated provider error (HTTP 401)", got "Internal error: turn failed: other"`}},
		{name: "a failure where the recording ended the turn", lines: []string{initLine, newLine, endLine}, ours: with(Failed("x")),
			problems: []string{"stdout.expected.jsonl:3: expected a prompt result (stopReason), the replay sent a prompt error"}},
		{name: "a missing prompt result", lines: []string{endLine, endLine}, ours: []Frame{Stop("end_turn")},
			problems: []string{"stdout.expected.jsonl:2: the replay sent no prompt result (stopReason) here", "2 compared lines, the replay sent 1 frames"}},
		{name: "a tool_call line fails", lines: []string{toolLine, endLine}, ours: []Frame{Stop("end_turn")},
			problems: []string{"stdout.expected.jsonl:1: a session/update tool_call line, which dsh-replay does not model"}},
		{name: "an unknown kind fails", lines: []string{planLine, endLine}, ours: []Frame{Stop("end_turn")},
			problems: []string{"stdout.expected.jsonl:1: a session/update plan line"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := Compare("stdout.expected.jsonl", classify(t, tc.lines...), tc.ours)
			if len(rep.Problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %d like %q", rep.Problems, len(tc.problems), tc.problems)
			}
			for i, p := range tc.problems {
				if !strings.Contains(rep.Problems[i], p) {
					t.Errorf("problem %d = %q, want it to contain %q", i, rep.Problems[i], p)
				}
			}
		})
	}
}

func TestNoteCountsEveryLine(t *testing.T) {
	rep := Compare("out", classify(t, initLine, newLine, permLine, chunkLine, endLine, toolLine), []Frame{Initialized(false), SessionCreated(), PermissionRequest("call_a"), AgentText("DONE"), Stop("end_turn")})
	want := "out: compared initialize result 1, prompt result (stopReason) 1, session/new result 1, session/request_permission 1, session/update agent_message_chunk 1; not compared session/update tool_call 1"
	if got := rep.Note("out"); got != want {
		t.Errorf("note\n%s\nwant\n%s", got, want)
	}
}

// TestEveryKindHasAReason: each kind of the table says what is compared or why not.
func TestEveryKindHasAReason(t *testing.T) {
	for _, k := range Kinds {
		if k.Why == "" {
			t.Errorf("%s has no reason", k.Kind)
		}
	}
}

// TestFrameText: an agent_message_chunk frame's text; a frame of another
// kind has none.
func TestFrameText(t *testing.T) {
	if got := AgentText("hello <there>").Text(); got != "hello <there>" {
		t.Errorf("AgentText(...).Text() = %q", got)
	}
	for _, f := range []Frame{Stop("end_turn"), Failed("boom"), SessionCreated()} {
		if got := f.Text(); got != "" {
			t.Errorf("%s frame has text %q", f.Kind, got)
		}
	}
}
