package recording

import (
	"errors"
	"strings"
	"testing"
)

// pyLog is a Python SDK session's log: header {{parent}}, one turn.
const pyLog = `{"type":"session","version":0,"id":"{{parent}}","createdAt":0,"cwd":"{{cwd}}"}` + "\n" +
	`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}` + "\n" +
	`{"type":"turn/end","seq":1,"time":0,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"

// pyResult is result.json with events and notifications as given.
func pyResult(events, notifications string) string {
	return "{\n  \"session_id\": \"{{parent}}\",\n  \"final_response\": \"OK\",\n  \"events\": [\n" + events + "\n  ],\n  \"notifications\": [\n" + notifications + "\n  ],\n  \"session_root\": \"{{cwd}}/sessions\"\n}\n"
}

const (
	pyStart = `    {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}`
	pyEnd   = `    {"type": "turn/end", "seq": 1, "time": 0, "data": {"turn": 1, "reason": {"kind": "completed"}}}`
)

func pyNote(sid, typ string, seq int, data string) string {
	return `    {"method": "session.event", "payload": {"sessionId": "` + sid + `", "event": {"type": "` + typ + `", "seq": ` + string(rune('0'+seq)) + `, "time": 0, "data": ` + data + `}}}`
}

// TestPythonSDKLoad: result.json's events load as the session's,
// its notifications split as a JSON-RPC run's (the session's, a child's),
// statuses and subagent notices counted, the final response kept.
func TestPythonSDKLoad(t *testing.T) {
	notes := strings.Join([]string{
		pyNote("{{parent}}", "turn/start", 0, `{"turn": 1}`),
		`    {"method": "session.status", "payload": {"sessionId": "{{parent}}", "status": "running"}}`,
		pyNote("{{child-1}}", "turn/start", 0, `{"turn": 1}`),
		`    {"method": "subagent.started", "payload": {"parentSessionId": "{{parent}}", "childSessionId": "{{child-1}}"}}`,
		pyNote("{{parent}}", "turn/end", 1, `{"turn": 1, "reason": {"kind": "completed"}}`),
		`    {"method": "session.status", "payload": {"sessionId": "{{parent}}", "status": "idle"}}`,
	}, ",\n")
	dir := writeRec(t, "p", map[string]string{SessionFile: pyLog, ResultFile: pyResult(pyStart+",\n"+pyEnd, notes), SettingsFile: `{"prompt":"go"}`})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Stream
	if r.Frontend != PythonSDK || len(s.Events) != 2 || len(s.Notified) != 2 || len(s.Children) != 1 || len(s.Statuses) != 2 || s.Subagents != 1 || s.Result.Output != "OK" || s.ResultLine != 3 {
		t.Fatalf("loaded %q: %d events, %d notified, children %v, statuses %v, %d subagent notices, result %+v at line %d", r.Frontend, len(s.Events), len(s.Notified), s.Children, s.Statuses, s.Subagents, s.Result, s.ResultLine)
	}
	if got := r.IDTokens(); strings.Join(got, " ") != "{{parent}} {{workflow-run}}" {
		t.Fatalf("IDTokens = %v", got)
	}
}

// TestPythonSDKRejectsNamingLineAndField: a malformed result.json is
// refused naming result.json, the line of the bad element and the field's
// path inside the file.
func TestPythonSDKRejectsNamingLineAndField(t *testing.T) {
	good := pyNote("{{parent}}", "turn/start", 0, `{"turn": 1}`)
	tests := []struct {
		name, result string
		field        string
		line         int
		problem      string
	}{
		{"not JSON", "{\n  \"session_id\": \n", "", 2, "truncated JSON"},
		{"an unknown key", strings.Replace(pyResult(pyStart, good), `"session_root"`, `"root": 1, "session_root"`, 1), "root", 10, "unknown field"},
		{"no final_response", strings.Replace(pyResult(pyStart, good), `"final_response": "OK",`, "", 1), "final_response", 1, "missing"},
		{"no session_root", strings.Replace(pyResult(pyStart, good), `,
  "session_root": "{{cwd}}/sessions"`, "", 1), "session_root", 1, "missing"},
		{"final_response not a string", strings.Replace(pyResult(pyStart, good), `"final_response": "OK"`, `"final_response": 1`, 1), "final_response", 3, "want string"},
		{"another session's id", strings.Replace(pyResult(pyStart, good), `"session_id": "{{parent}}"`, `"session_id": "{{child-1}}"`, 1), "session_id", 2, `"{{child-1}}" is not session.jsonl's id`},
		{"an event's bad field", pyResult(pyStart+",\n"+`    {"type": "turn/end", "seq": "1", "time": 0, "data": {}}`, good), "events[1].seq", 6, "want number"},
		{"an event without its data", pyResult(pyStart+",\n"+`    {"type": "turn/end", "seq": 1, "time": 0}`, good), "events[1].data", 6, "missing"},
		{"events out of sequence", pyResult(pyStart+",\n"+`    {"type": "turn/end", "seq": 5, "time": 0, "data": {"turn": 1, "reason": {"kind": "completed"}}}`, good), "events[1].seq", 6, "want 1"},
		{"a notification's unknown method", pyResult(pyStart, good+",\n"+`    {"method": "session.frob", "payload": {}}`), "notifications[1].method", 9, "want session.event"},
		{"a notification without payload", pyResult(pyStart, good+",\n"+`    {"method": "session.status"}`), "notifications[1].payload", 9, "missing"},
		{"a bad status", pyResult(pyStart, `    {"method": "session.status", "payload": {"status": "busy"}}`), "notifications[0].payload.status", 8, `want "running" or "idle"`},
		{"a status of the wrong type", pyResult(pyStart, `    {"method": "session.status", "payload": {"status": 1}}`), "notifications[0].payload.status", 8, "want string"},
		{"a notified event's bad field", pyResult(pyStart, good+",\n"+pyNote("{{parent}}", "turn/end", 1, `{"turn": "1", "reason": {"kind": "completed"}}`)), "notifications[1].payload.event.data.turn", 9, "want number"},
		{"a method not a string", pyResult(pyStart, `    {"method": 1, "payload": {}}`), "notifications[0].method", 8, "want string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeRec(t, "p", map[string]string{SessionFile: pyLog, ResultFile: tc.result, SettingsFile: `{"prompt":"go"}`}))
			var e *Error
			if !errors.As(err, &e) || e.File != ResultFile || e.Field != tc.field || e.Line != tc.line || !strings.Contains(e.Problem, tc.problem) {
				t.Fatalf("Load = %v\n(%#v)\nwant result.json:%d field %q problem containing %q", err, e, tc.line, tc.field, tc.problem)
			}
		})
	}
}
