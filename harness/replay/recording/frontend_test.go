package recording

import (
	"errors"
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
		{"headless parent and child", []string{ChildExpectedFile, ChildReplayFile, ParentExpectedFile, OverrideFile}, Headless, false},
		{"headless parent replay", []string{ParentReplayFile, ChildReplayFile, StreamFile}, Headless, false},
		{"headless resume", []string{HeaderReplayFile, OverrideFile, SessionExpectedFile}, Headless, false},
		{"jsonrpc", []string{SessionFile, NotificationsFile, ResultExpectedFile}, JSONRPC, false},
		{"python sdk", []string{SessionFile, ResultFile}, PythonSDK, false},
		{"goal", []string{InputFile, SessionFile, SessionExpectedFile, StdoutFile, OverrideFile}, Goal, false},
		{"web", []string{SessionFile, "ui.expected.md"}, Web, false},
		{"web seed only", []string{SeedFile, "terminal-card.expected.md"}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ClassifyFiles("r", tc.files)
			var ns *NotASessionError
			if tc.noSes {
				if !errors.As(err, &ns) || !strings.Contains(err.Error(), "r: not a session: seed.jsonl only") {
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
		{"a prompt beside input.json", map[string]string{InputFile: promptInput, StreamFile: streamSplice + streamResult, SettingsFile: `{"prompt":"x"}`}, SettingsFile, "prompt", 0, "set, but the recording has input.json"},
		{"a prompt in an ACP recording", map[string]string{InputFile: promptInput, SessionFile: streamHead, StdoutFile: "", SettingsFile: `{"prompt":"x"}`}, SettingsFile, "prompt", 0, "set, but the recording has input.json"},
		{"another front end", map[string]string{SessionFile: streamHead, NotificationsFile: ""}, "", "", 0, "a jsonrpc recording: dsh-replay does not replay this front end yet"},
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

// TestWebSeedIsNotASession: a web directory with only seed.jsonl is
// refused in one line as not a session.
func TestWebSeedIsNotASession(t *testing.T) {
	_, err := Load(writeRec(t, "pwsh-terminal", map[string]string{SeedFile: streamHead, "terminal-card.expected.md": "x"}))
	var ns *NotASessionError
	if !errors.As(err, &ns) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "pwsh-terminal: not a session: seed.jsonl only") {
		t.Fatalf("Load = %v", err)
	}
}
