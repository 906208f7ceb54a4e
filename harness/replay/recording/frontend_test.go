package recording

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassifyFiles: the files upstream's suites write say the front end.
func TestClassifyFiles(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  Frontend
		noSes bool
	}{
		{"acp", []string{InputFile, SessionFile, StdoutFile}, ACP, false},
		{"acp missing stdout stays acp", []string{InputFile, SessionFile}, ACP, false},
		{"headless stream", []string{InputFile, SessionFile, StreamFile}, Headless, false},
		{"headless stream only", []string{InputFile, OverrideFile, StreamFile}, Headless, false},
		{"headless profile", []string{SessionExpectedFile, StderrExpectedFile}, Headless, false},
		{"headless resume, its script another case's", []string{SessionExpectedFile}, Headless, false},
		{"headless startup failure", []string{StderrExpectedFile}, "", true},
		{"headless parent and child", []string{ChildExpectedFile, ChildReplayFile, ParentExpectedFile, OverrideFile}, Headless, false},
		{"headless parent replay", []string{ParentReplayFile, ChildReplayFile, StreamFile}, Headless, false},
		{"headless resume", []string{HeaderReplayFile, OverrideFile, SessionExpectedFile}, Headless, false},
		{"jsonrpc", []string{SessionFile, NotificationsFile, ResultExpectedFile}, JSONRPC, false},
		{"python sdk", []string{SessionFile, ResultFile}, PythonSDK, false},
		{"goal", []string{InputFile, SessionFile, SessionExpectedFile, StdoutFile, OverrideFile}, Goal, false},
		{"web", []string{SessionFile, "ui.expected.md"}, Web, false},
		{"web seed only", []string{SeedFile, "terminal-card.expected.md"}, "", true},
		{"translation prompt", []string{RequestResponseFile}, "", true},
		{"request-response beside a session", []string{RequestResponseFile, InputFile, SessionFile}, ACP, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ClassifyFiles("r", tc.files)
			var ns *NotASessionError
			if tc.noSes {
				if !errors.As(err, &ns) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "r: not a session: "+tc.files[0]+" only") {
					t.Fatalf("ClassifyFiles = %q, %v; want a not-a-session error", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ClassifyFiles = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// writeRec writes files into a fresh recording directory named name.
func writeRec(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	streamHead   = `{"type":"session","version":0,"id":"{{sessionId}}","createdAt":0,"cwd":"{{cwd}}"}` + "\n"
	streamSplice = `{"type":"session_event","sessionId":"s","event":{"type":"turn/start","seq":1,"time":0,"data":{"turn":1}}}` + "\n"
	streamResult = `{"type":"result","sessionId":"s","output":"OK","usage":{"inputTokens":1,"outputTokens":2}}` + "\n"
	promptInput  = `{"steps":[{"op":"prompt","text":"go"}]}`
)

// goalTurn is one event of a goal session.
const goalTurn = `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}` + "\n"

// goalFiles are a goal recording's files, with over replacing some ("":
// the file is left out).
func goalFiles(over map[string]string) map[string]string {
	files := map[string]string{
		InputFile: `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"go"}]}`, SessionFile: streamHead,
		SessionExpectedFile: streamHead + goalTurn, StdoutFile: "", OverrideFile: `[{"kind":"chunks","chunks":[]}]`,
	}
	for k, v := range over {
		if v == "" {
			delete(files, k)
			continue
		}
		files[k] = v
	}
	return files
}

// TestGoalLoad: a goal directory is driven as ACP's (its steps, its
// stdout) and compares its whole log, session.expected.jsonl.
func TestGoalLoad(t *testing.T) {
	r, err := Load(writeRec(t, "g", goalFiles(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Frontend != Goal || !r.Frontend.OverACP() || r.LogFile != SessionExpectedFile || len(r.Events) != 1 || len(r.Input.Steps) != 3 {
		t.Fatalf("loaded %q from %s, %d events, %d steps", r.Frontend, r.LogFile, len(r.Events), len(r.Input.Steps))
	}
	for _, fe := range []Frontend{Headless, JSONRPC, PythonSDK, Web} {
		if fe.OverACP() {
			t.Errorf("%s drives the ACP agent", fe)
		}
	}
}

// TestScriptOnlyChildren: beside a headless run, a child log of model
// chunks alone and no origin is a child's script (llm-replay's child
// file), not compared; with another event, or beside an ACP recording, the
// missing origin is an error naming it.
func TestScriptOnlyChildren(t *testing.T) {
	parent := `{"type":"session","version":0,"id":"41111111-1111-4111-8111-111111111111","createdAt":0,"cwd":"{{cwd}}"}` + "\n"
	child := `{"type":"session","version":0,"id":"42222222-2222-4222-8222-222222222222","createdAt":0,"cwd":"{{cwd}}","parentSession":"41111111-1111-4111-8111-111111111111"}` + "\n"
	chunk := `{"type":"assistant/chunk","seq":0,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}` + "\n"
	turn := `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}` + "\n"
	headless := func(c string) map[string]string {
		return map[string]string{InputFile: promptInput, SessionFile: parent, StreamFile: streamSplice + streamResult, ChildFile(1): c}
	}
	r, err := Load(writeRec(t, "h", headless(child+chunk)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Children) != 1 || !r.Children[0].ScriptOnly || len(r.ComparedChildren()) != 0 || len(r.Children[0].Script.Replies) != 1 {
		t.Fatalf("children %+v", r.Children)
	}
	for name, files := range map[string]map[string]string{
		"another event": headless(child + turn),
		"no event":      headless(child),
		"beside ACP":    {InputFile: promptInput, SessionFile: parent, StdoutFile: "", ChildFile(1): child + chunk},
	} {
		_, err := Load(writeRec(t, "h", files))
		var e *Error
		if !errors.As(err, &e) || e.File != ChildFile(1) || e.Line != 1 || e.Field != "origin" {
			t.Errorf("%s: Load = %v", name, err)
		}
	}
}

// TestHeadlessLoad: a headless directory loads its input, its log (the
// stream's events when the log is a header) and its stream's result.
func TestHeadlessLoad(t *testing.T) {
	dir := writeRec(t, "h", map[string]string{InputFile: promptInput, SessionFile: streamHead, StreamFile: streamSplice + streamResult})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Frontend != Headless || r.LogFile != StreamFile || len(r.Events) != 1 || r.Stream.Result.Output != "OK" || r.Stream.Result.Usage["outputTokens"] != 2 || r.Stream.ResultLine != 2 {
		t.Fatalf("loaded %q from %s, %d events, result %+v at line %d", r.Frontend, r.LogFile, len(r.Events), r.Stream.Result, r.Stream.ResultLine)
	}
}

// TestHeadlessRejectsBadInputNamingFileLineAndField: a defect of a
// headless directory names the file, line and field.
func TestHeadlessRejectsBadInputNamingFileLineAndField(t *testing.T) {
	tests := []struct {
		name         string
		files        map[string]string
		file, field  string
		line         int
		problemStart string
	}{
		{"no result", map[string]string{InputFile: promptInput, StreamFile: streamSplice}, StreamFile, "", 1, "no result record"},
		{"a record after the result", map[string]string{InputFile: promptInput, StreamFile: streamResult + streamSplice}, StreamFile, "type", 2, "a record after the result"},
		{"unknown record", map[string]string{InputFile: promptInput, StreamFile: `{"type":"log","sessionId":"s"}` + "\n" + streamResult}, StreamFile, "type", 1, `want "session_event" or "result"`},
		{"an event's bad field", map[string]string{InputFile: promptInput, StreamFile: `{"type":"session_event","sessionId":"s","event":{"type":"turn/start","seq":"1","time":0,"data":{}}}` + "\n" + streamResult}, StreamFile, "event.seq", 1, "want number"},
		{"an unknown event type", map[string]string{InputFile: promptInput, StreamFile: `{"type":"session_event","sessionId":"s","event":{"type":"goal/frob","seq":1,"time":0,"data":{}}}` + "\n" + streamResult}, StreamFile, "event.type", 1, `unknown event type "goal/frob"`},
		{"no session id", map[string]string{InputFile: promptInput, StreamFile: `{"type":"result","output":""}` + "\n"}, StreamFile, "sessionId", 1, "missing"},
		{"no prompt", map[string]string{SessionExpectedFile: streamHead, StderrExpectedFile: ""}, InputFile, "", 0, "missing file, and no prompt setting"},
		{"a newer log format", map[string]string{SessionExpectedFile: strings.Replace(streamHead, `"version":0`, `"version":1`, 1), StderrExpectedFile: "", SettingsFile: `{"prompt":"x"}`}, SessionExpectedFile, "version", 1, "log format v1, but upstream's rc.8 (and this replay) reads only v0: the log was written by a newer harness"},
		{"an older log format", map[string]string{SessionExpectedFile: strings.Replace(streamHead, `"version":0`, `"version":-1`, 1), StderrExpectedFile: "", SettingsFile: `{"prompt":"x"}`}, SessionExpectedFile, "version", 1, "log format v-1, older than the supported v0, with no upgrade path"},
		{"a prompt beside input.json", map[string]string{InputFile: promptInput, StreamFile: streamSplice + streamResult, SettingsFile: `{"prompt":"x"}`}, SettingsFile, "prompt", 0, "set, but the recording has input.json"},
		{"a prompt in an ACP recording", map[string]string{InputFile: promptInput, SessionFile: streamHead, StdoutFile: "", SettingsFile: `{"prompt":"x"}`}, SettingsFile, "prompt", 0, "set, but the recording has input.json"},
		{"a python-sdk run without its prompt", map[string]string{SessionFile: streamHead, ResultFile: "{}"}, InputFile, "", 0, "missing file, and no prompt setting; session.jsonl holds 0 user messages, so its prompt cannot be read from it"},
		{"a json-rpc run of two prompts", map[string]string{SessionFile: streamHead + userMsg(0, "one") + userMsg(1, "two"), NotificationsFile: "", ResultExpectedFile: ""}, InputFile, "", 0, "missing file, and no prompt setting; session.jsonl holds 2 user messages"},
		{"a goal log with events", goalFiles(map[string]string{SessionFile: streamHead + goalTurn}), SessionFile, "", 2, "a goal recording's session.jsonl is its header alone"},
		{"a goal recording without its script", goalFiles(map[string]string{OverrideFile: ""}), OverrideFile, "", 0, "missing file or not a whole script"},
		{"a goal change without its operation", goalFiles(map[string]string{SessionExpectedFile: streamHead + `{"type":"goal/change","seq":0,"time":0,"data":{"kind":"goal/change","version":1}}` + "\n"}), SessionExpectedFile, "data.operation", 2, "missing (required in goal/change)"},
		{"a goal change of a wrong type", goalFiles(map[string]string{SessionExpectedFile: streamHead + `{"type":"goal/change","seq":0,"time":0,"data":{"kind":"goal/change","version":"1","operation":"create"}}` + "\n"}), SessionExpectedFile, "data.version", 2, "want number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeRec(t, "h", tc.files))
			var e *Error
			if !errors.As(err, &e) || e.File != tc.file || e.Field != tc.field || e.Line != tc.line || !strings.HasPrefix(e.Problem, tc.problemStart) {
				t.Fatalf("Load = %v (%#v); want %s:%d field %q problem %q...", err, e, tc.file, tc.line, tc.field, tc.problemStart)
			}
		})
	}
}

// userMsg is a user's user/message event of seq n holding text.
func userMsg(n int, text string) string {
	return fmt.Sprintf(`{"type":"user/message","seq":%d,"time":0,"data":{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"m%d"}}`, n, text, n) + "\n"
}

// TestSDKPromptFromTheLog: an SDK run (JSON-RPC, Python SDK) whose name the
// settings table does not know, with no input.json and no prompt setting,
// is prompted with its log's one user message; a known name keeps its
// setting.
func TestSDKPromptFromTheLog(t *testing.T) {
	for _, tc := range []struct{ src, name, want string }{
		{"examples/jsonrpc-agent/tests/snapshots/text-turn", "an-unknown-sdk-turn", "Reply with exactly: SDK snapshot OK"},
		{"scripts/snapshots/python-sdk-single-exe/advanced", "another-scenario", "Run the advanced packaged-runtime snapshot scenario."},
	} {
		dst := filepath.Join(t.TempDir(), tc.name)
		if err := CopyTree(filepath.Join("..", "..", "..", "transcripts", "frontends", tc.src), dst); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dst, SettingsFile)); err != nil {
			t.Fatal(err)
		}
		r, err := Load(dst)
		if err != nil {
			t.Fatal(err)
		}
		if !r.PromptFromLog || len(r.Input.Steps) != 1 || r.Input.Steps[0].Op != "prompt" || r.Input.Steps[0].Text != tc.want {
			t.Errorf("%s as %s: PromptFromLog %v, steps %+v; want the one prompt %q", tc.src, tc.name, r.PromptFromLog, r.Input.Steps, tc.want)
		}
	}
	r, err := Load(filepath.Join("..", "..", "..", "transcripts", "frontends", "examples/jsonrpc-agent/tests/snapshots/text-turn"))
	if err != nil {
		t.Fatal(err)
	}
	if r.PromptFromLog || r.Input.Steps[0].Text != FrontendSuiteSettings[JSONRPC]["text-turn"].Prompt {
		t.Errorf("text-turn: PromptFromLog %v, steps %+v; want its setting's prompt", r.PromptFromLog, r.Input.Steps)
	}
}

// TestWebSeedIsNotASession: a web directory with only seed.jsonl is
// refused in one line as not a session.
func TestWebSeedIsNotASession(t *testing.T) {
	_, err := Load(writeRec(t, "pwsh-terminal", map[string]string{SeedFile: streamHead, "terminal-card.expected.md": "x"}))
	var ns *NotASessionError
	if !errors.As(err, &ns) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "pwsh-terminal: not a session: seed.jsonl only") {
		t.Fatalf("Load = %v", err)
	}
}

// TestTranslationPromptIsNotASession: upstream's translation-prompt
// snapshot (request-response.expected.json alone) is a recording directory
// to discovery, and refused in one line as not a session.
func TestTranslationPromptIsNotASession(t *testing.T) {
	dir := writeRec(t, "translation-prompt-v4", map[string]string{RequestResponseFile: `{"request":{},"response":{}}`})
	if !IsRecording(dir) {
		t.Fatal("IsRecording = false: a tree holding it would not name it")
	}
	_, err := Load(dir)
	var ns *NotASessionError
	if !errors.As(err, &ns) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "translation-prompt-v4: not a session: request-response.expected.json only") {
		t.Fatalf("Load = %v", err)
	}
}

// TestJSONRPCLoad: the notifications split into the session's events (those
// continuing its log) and a child's; statuses and the final response load.
func TestJSONRPCLoad(t *testing.T) {
	log := streamHead + `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}` + "\n" + `{"type":"turn/end","seq":1,"time":0,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	ev := func(typ string, seq int, data string) string {
		return `{"method":"session.event","params":{"sessionId":"s","event":{"type":"` + typ + `","seq":` + string(rune('0'+seq)) + `,"time":0,"data":` + data + `}}}` + "\n"
	}
	notes := ev("turn/start", 0, `{"turn":1}`) + `{"method":"session.status","params":{"sessionId":"s","status":"running"}}` + "\n" +
		ev("turn/start", 0, `{"turn":1}`) + ev("turn/end", 1, `{"turn":1,"reason":{"kind":"completed"}}`) + ev("turn/end", 1, `{"turn":1,"reason":{"kind":"completed"}}`) +
		`{"method":"subagent.finished","params":{}}` + "\n"
	dir := writeRec(t, "j", map[string]string{SessionFile: log, NotificationsFile: notes, ResultExpectedFile: `{"sessionId":"s","finalResponse":"OK"}`, SettingsFile: `{"prompt":"go"}`})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Stream
	if r.Frontend != JSONRPC || len(s.Events) != 2 || len(s.Children) != 1 || len(s.Children[0]) != 2 || len(s.Statuses) != 1 || s.Subagents != 1 || s.Result.Output != "OK" {
		t.Fatalf("loaded %q: %d events, children %v, statuses %v, %d subagent notices, result %+v", r.Frontend, len(s.Events), s.Children, s.Statuses, s.Subagents, s.Result)
	}
	bad := []struct {
		name, notes, result string
		file, field         string
		line                int
	}{
		{"unknown method", `{"method":"session.frob","params":{}}` + "\n", `{"finalResponse":""}`, NotificationsFile, "method", 1},
		{"bad status", `{"method":"session.status","params":{"status":"busy"}}` + "\n", `{"finalResponse":""}`, NotificationsFile, "params.status", 1},
		{"an event's bad field", `{"method":"session.event","params":{"event":{"type":"turn/start","seq":0,"time":0}}}` + "\n", `{"finalResponse":""}`, NotificationsFile, "params.event.data", 1},
		{"no final response", "", `{"sessionId":"s"}`, ResultExpectedFile, "finalResponse", 1},
		{"an unknown result key", "", `{"finalResponse":"","x":1}`, ResultExpectedFile, "x", 1},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeRec(t, "j", map[string]string{SessionFile: log, NotificationsFile: tc.notes, ResultExpectedFile: tc.result, SettingsFile: `{"prompt":"go"}`}))
			var e *Error
			if !errors.As(err, &e) || e.File != tc.file || e.Field != tc.field || e.Line != tc.line {
				t.Fatalf("Load = %v; want %s:%d field %s", err, tc.file, tc.line, tc.field)
			}
		})
	}
}

// TestWebSessionByItsPlace: a directory holding session.jsonl alone is a
// web session under upstream's web snapshots, and an ACP recording (whose
// missing files are named) anywhere else.
func TestWebSessionByItsPlace(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		parent string
		want   Frontend
	}{{"apps/web/tests/snapshots", Web}, {"apps/web/tests/other", ACP}, {"snapshots", ACP}} {
		dir := filepath.Join(root, tc.parent, "s")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, SessionFile), []byte(streamHead), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := DetectFrontend(dir, "s"); err != nil || got != tc.want {
			t.Errorf("%s: DetectFrontend = %q, %v; want %q", tc.parent, got, err, tc.want)
		}
	}
}
