package hooks

import "testing"

// The stdin bytes of each dialect and point, as upstream writes them.
func TestPayloads(t *testing.T) {
	args := []byte(`{"command": "echo HELLO", "description": "Run echo HELLO"}`)
	facts := callFacts{SessionID: "S", TranscriptPath: "/logs/S/session.jsonl", Cwd: "/ws", Turn: 1, ToolName: "bash", CallID: "call_00_x", Args: args}
	resp := "HELLO\n"
	post := facts
	post.Response = &resp
	agentless := callFacts{Cwd: "/proc-cwd", ToolName: "bash", CallID: "c", Args: args}
	tests := []struct {
		name  string
		d     *Dialect
		point Point
		f     callFacts
		want  string
	}{
		{"claude-code pre", ClaudeCode, PreToolUse, facts,
			`{"session_id":"S","transcript_path":"/logs/S/session.jsonl","cwd":"/ws","hook_event_name":"PreToolUse","tool_name":"bash","tool_input":{"command":"echo HELLO","description":"Run echo HELLO"},"tool_use_id":"call_00_x"}` + "\n"},
		{"claude-code post", ClaudeCode, PostToolUse, post,
			`{"session_id":"S","transcript_path":"/logs/S/session.jsonl","cwd":"/ws","hook_event_name":"PostToolUse","tool_name":"bash","tool_input":{"command":"echo HELLO","description":"Run echo HELLO"},"tool_use_id":"call_00_x","tool_response":"HELLO\n"}` + "\n"},
		{"codex pre", Codex, PreToolUse, facts,
			`{"session_id":"S","transcript_path":"/logs/S/session.jsonl","cwd":"/ws","hook_event_name":"PreToolUse","model":"","permission_mode":"default","turn_id":"1","tool_name":"bash","tool_input":{"command":"echo HELLO"},"tool_use_id":"call_00_x"}`},
		{"codex post", Codex, PostToolUse, post,
			`{"session_id":"S","transcript_path":"/logs/S/session.jsonl","cwd":"/ws","hook_event_name":"PostToolUse","model":"","permission_mode":"default","turn_id":"1","tool_name":"bash","tool_input":{"command":"echo HELLO"},"tool_use_id":"call_00_x","tool_response":"HELLO\n"}`},
		{"claude-code agentless", ClaudeCode, PreToolUse, agentless,
			`{"session_id":"","transcript_path":"","cwd":"/proc-cwd","hook_event_name":"PreToolUse","tool_name":"bash","tool_input":{"command":"echo HELLO","description":"Run echo HELLO"},"tool_use_id":"c"}` + "\n"},
		{"codex agentless: null transcript, turn 0", Codex, PreToolUse, agentless,
			`{"session_id":"","transcript_path":null,"cwd":"/proc-cwd","hook_event_name":"PreToolUse","model":"","permission_mode":"default","turn_id":"0","tool_name":"bash","tool_input":{"command":"echo HELLO"},"tool_use_id":"c"}`},
		{"codex model option", Codex, PreToolUse, callFacts{Model: "m-1", ToolName: "shell", Args: []byte(`{"command":"ls"}`)},
			`{"session_id":"","transcript_path":null,"cwd":"","hook_event_name":"PreToolUse","model":"m-1","permission_mode":"default","turn_id":"0","tool_name":"shell","tool_input":{"command":"ls"},"tool_use_id":""}`},
		{"codex: a missing command is empty", Codex, PreToolUse, callFacts{ToolName: "read", Args: []byte(`{"path":"a"}`)},
			`{"session_id":"","transcript_path":null,"cwd":"","hook_event_name":"PreToolUse","model":"","permission_mode":"default","turn_id":"0","tool_name":"read","tool_input":{"command":""},"tool_use_id":""}`},
		{"codex: a non-string command is empty", Codex, PreToolUse, callFacts{ToolName: "bash", Args: []byte(`{"command":["ls"]}`)},
			`{"session_id":"","transcript_path":null,"cwd":"","hook_event_name":"PreToolUse","model":"","permission_mode":"default","turn_id":"0","tool_name":"bash","tool_input":{"command":""},"tool_use_id":""}`},
		{"claude-code: JavaScript key order and numbers", ClaudeCode, PreToolUse, callFacts{ToolName: "t", Args: []byte(`{"b": 1.0, "2": 2e21, "a": "<\u2028>", "1": -0}`)},
			`{"session_id":"","transcript_path":"","cwd":"","hook_event_name":"PreToolUse","tool_name":"t","tool_input":{"1":0,"2":2e+21,"b":1,"a":"<` + "\u2028" + `>"},"tool_use_id":""}` + "\n"},
		{"claude-code: arguments that are not JSON stay a string", ClaudeCode, PreToolUse, callFacts{ToolName: "t", Args: []byte(`{oops`)},
			`{"session_id":"","transcript_path":"","cwd":"","hook_event_name":"PreToolUse","tool_name":"t","tool_input":"{oops","tool_use_id":""}` + "\n"},
		{"claude-code: no arguments is {}", ClaudeCode, PreToolUse, callFacts{ToolName: "t"},
			`{"session_id":"","transcript_path":"","cwd":"","hook_event_name":"PreToolUse","tool_name":"t","tool_input":{},"tool_use_id":""}` + "\n"},
	}
	for _, tt := range tests {
		if got := string(payload(tt.d, tt.point, tt.f)); got != tt.want {
			t.Errorf("%s:\n got  %s\n want %s", tt.name, got, tt.want)
		}
	}
}
