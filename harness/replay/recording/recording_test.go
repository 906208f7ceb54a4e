package recording

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/tools/code/sdk"
)

const transcripts = "../../../transcripts"
const bad = "../../../testdata/replay/bad"

func TestLoadRejectsBadRecordingsNamingFileLineAndField(t *testing.T) {
	tests := []struct {
		name, dir, file      string
		line                 int
		field, problemPrefix string
	}{
		{name: "truncated last line", dir: "truncated-line", file: SessionFile, line: 35, problemPrefix: "truncated last line (no newline): truncated JSON"},
		{name: "unknown event type", dir: "unknown-event-type", file: SessionFile, line: 8, field: "type", problemPrefix: `unknown event type "session/frobnicate"`},
		{name: "missing stdout file", dir: "missing-stdout", file: StdoutFile, line: 0, problemPrefix: "missing file"},
		{name: "wrong field type", dir: "wrong-field-type", file: SessionFile, line: 20, field: "data.callId", problemPrefix: "want string, got JSON number"},
		{name: "packed row with too few gaps", dir: "packed-row-gaps", file: SessionFile, line: 12, field: "data.dt", problemPrefix: "has 26 gaps but data.texts has 29 members"},
		{name: "a nested-call event without its sub-call id", dir: "dispatch-without-subcall", file: SessionFile, line: 21, field: "data.subCallId", problemPrefix: "missing"},
		{name: "a wire tool without a name", dir: "tool-schemas-nameless", file: ToolSchemasFile, line: 3, field: "initial[0].name", problemPrefix: "missing"},
		{name: "unsupported input step", dir: "unsupported-step", file: InputFile, line: 14, field: "steps[3].op", problemPrefix: `step "waitForGoalRound" is not supported`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(filepath.Join(bad, tc.dir))
			if r != nil {
				t.Errorf("Load returned a recording alongside an error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load error = %v (%T), want *recording.Error", err, err)
			}
			if e.Recording != tc.dir || e.File != tc.file || e.Line != tc.line || e.Field != tc.field || !strings.HasPrefix(e.Problem, tc.problemPrefix) {
				t.Errorf("got %#v\nwant recording %q file %q line %d field %q problem starting %q", e, tc.dir, tc.file, tc.line, tc.field, tc.problemPrefix)
			}
		})
	}
}

func TestDeriveRejectsAStreamWithoutFinish(t *testing.T) {
	r, err := Load(filepath.Join(bad, "stream-without-finish"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Derive(r)
	var e *Error
	if !errors.As(err, &e) || e.File != SessionFile || e.Line != 23 || e.Field != "data.step" || !strings.Contains(e.Problem, "ended without a finish chunk") {
		t.Fatalf("Derive error = %v, want session.jsonl:23 field data.step ... ended without a finish chunk", err)
	}
}

func TestDeriveRebuildsRepliesFromChunks(t *testing.T) {
	tests := []struct {
		name      string
		rec       string
		finishes  []string
		toolCalls []string // name per call, in order over all replies
	}{
		{name: "bash call then stop", rec: "tool-call-turn", finishes: []string{"tool-calls", "stop"}, toolCalls: []string{"bash"}},
		{name: "read then edit then stop", rec: "fs-edit", finishes: []string{"tool-calls", "tool-calls", "stop"}, toolCalls: []string{"read", "edit"}},
		{name: "refused edit, read, edit", rec: "fs-policy-reject", finishes: []string{"tool-calls", "tool-calls", "tool-calls", "stop"}, toolCalls: []string{"edit", "read", "edit"}},
		{name: "text-chunks row expanded", rec: "escalation-rejected", finishes: []string{"tool-calls", "stop"}, toolCalls: []string{"bash"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(filepath.Join(transcripts, tc.rec))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Derive(r)
			if err != nil {
				t.Fatal(err)
			}
			var fin, calls []string
			for _, rep := range s.Replies {
				fin = append(fin, rep.Finish)
				for _, c := range rep.ToolCalls {
					calls = append(calls, c.Name)
					if c.ID == "" || c.Arguments == "" {
						t.Errorf("tool call without id or arguments: %+v", c)
					}
				}
			}
			if strings.Join(fin, ",") != strings.Join(tc.finishes, ",") || strings.Join(calls, ",") != strings.Join(tc.toolCalls, ",") {
				t.Errorf("finishes %v calls %v, want %v %v", fin, calls, tc.finishes, tc.toolCalls)
			}
		})
	}
}

func TestPackedRowsExpandToContiguousChunks(t *testing.T) {
	r, err := Load(filepath.Join(transcripts, "escalation-rejected"))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for i, e := range r.Events {
		if e.Seq != r.Events[0].Seq+int64(i) {
			t.Fatalf("event %d has seq %d, want %d", i, e.Seq, r.Events[0].Seq+int64(i))
		}
		if e.Type == "assistant/chunk" && strings.Contains(string(e.Data), `"type":"text-delta"`) {
			text.WriteString(between(string(e.Data), `"text":"`, `"`))
		}
	}
	if got, want := text.String(), "The user rejected the permission escalation, so this command cannot be run."; got != want {
		t.Errorf("expanded text deltas = %q, want %q", got, want)
	}
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	if i < 0 {
		return ""
	}
	s = s[i+len(a):]
	return s[:strings.Index(s, b)]
}

func TestPolicyComesFromTheFirstRuntimeContext(t *testing.T) {
	tests := []struct{ name, rec, mode, approval string }{
		{name: "default recordings run danger-full-access under never", rec: "fs-write", mode: "danger-full-access", approval: "never"},
		{name: "escalation recordings run workspace-write under ask", rec: "escalation-approved", mode: "workspace-write", approval: "ask"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(filepath.Join(transcripts, tc.rec))
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.Policy()
			if err != nil {
				t.Fatal(err)
			}
			if p.Mode != tc.mode || p.Approval != tc.approval || p.Line != 7 {
				t.Errorf("policy = %+v, want %s/%s at line 7 (seq 5)", p, tc.mode, tc.approval)
			}
		})
	}
}

func TestSettingsFileIsOptionalAndStrict(t *testing.T) {
	dir := t.TempDir()
	if err := CopyTree(filepath.Join(transcripts, "fs-read"), dir); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir)
	if err != nil || r.HasSettings {
		t.Fatalf("Load without settings: %v, HasSettings %v", err, r != nil && r.HasSettings)
	}
	if err := os.WriteFile(filepath.Join(dir, SettingsFile), []byte("{\n  \"spillMaxInlineByte\": 800\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(dir)
	var e *Error
	if !errors.As(err, &e) || e.File != SettingsFile || e.Line != 2 || e.Field != "spillMaxInlineByte" || !strings.HasPrefix(e.Problem, "unknown key (known: spillMaxInlineBytes, ") {
		t.Fatalf("misspelt setting: %v, want %s:2 field spillMaxInlineByte unknown key", err, SettingsFile)
	}
}

// TestChildLogs: child logs load in n order with their own scripts (a
// fork's from seedLength on) and sidecars; a gap, a bad header, an origin
// other than subagent or a parent that is not a session of the recording
// is an error naming the child's file, line and field.
func TestChildLogs(t *testing.T) {
	r, err := Load(filepath.Join(transcripts, "subagent-fork-in-process"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Children) != 1 || r.Children[0].File != "session.1.jsonl" || r.Children[0].Header.SeedLength != 42 {
		t.Fatalf("children %+v", r.Children)
	}
	c := r.Children[0]
	if len(c.Script.Replies) != 1 || c.Script.Replies[0].Turn != 2 {
		t.Errorf("a fork's script starts at its seedLength: %+v", c.Script.Replies)
	}
	if got := c.FirstPrompt(); got != "What is the project codeword mentioned earlier in this conversation? Reply with exactly that one word and nothing else." {
		t.Errorf("first prompt %q", got)
	}
	rep, err := Load(filepath.Join(transcripts, "subagent-report"))
	if err != nil {
		t.Fatal(err)
	}
	if ch := rep.Children[0]; ch.ToolSchemas == nil || len(ch.ToolSchemas.Initial) != 20 || ch.SystemPrompt == nil {
		t.Errorf("child sidecars not read: %+v", ch)
	}
	for _, tc := range []struct {
		name, file, content string
		field, problem      string
	}{
		{"gap", "session.2.jsonl", "", "", "missing: child logs are numbered 1..1 without a gap"},
		{"bad header", "session.1.jsonl", "{}\n", "type", `want "session"`},
		{"origin", "session.1.jsonl", `{"type":"session","version":0,"id":"c","createdAt":1,"cwd":"x","parentSession":"PARENT","delegationDepth":1}` + "\n", "origin", `want "subagent"`},
		{"parent", "session.1.jsonl", `{"type":"session","version":0,"id":"c","createdAt":1,"cwd":"x","parentSession":"nobody","origin":"subagent","delegationDepth":1}` + "\n", "parentSession", "is neither session.jsonl's id nor an earlier child's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := CopyTree(filepath.Join(transcripts, "fs-read"), dir); err != nil {
				t.Fatal(err)
			}
			base, _ := Load(dir)
			content := strings.ReplaceAll(tc.content, "PARENT", base.Header.ID)
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir)
			var e *Error
			want := tc.file
			if tc.name == "gap" {
				want = "session.1.jsonl"
			}
			if !errors.As(err, &e) || e.File != want || e.Field != tc.field || !strings.Contains(e.Problem, tc.problem) {
				t.Fatalf("Load = %v, want %s field %q: %s", err, want, tc.field, tc.problem)
			}
		})
	}
}

func TestToolSchemasSidecar(t *testing.T) {
	tests := []struct {
		name, json string
		line       int
		field      string
		problem    string // "" = valid
	}{
		{name: "two tools", json: "{\n  \"initial\": [\n    {\"name\": \"bash\", \"description\": \"d\", \"parameters\": {}},\n    {\"name\": \"read\", \"description\": \"r\", \"parameters\": {}}\n  ],\n  \"changes\": []\n}\n"},
		{name: "no initial", json: `{"changes": []}`, line: 1, field: "initial", problem: "missing"},
		{name: "a tool without a name", json: "{\"initial\": [\n{\"description\": \"d\", \"parameters\": {}}]}", line: 2, field: "initial[0].name", problem: "missing"},
		{name: "a tool without parameters", json: "{\"initial\": [\n{\"name\": \"a\", \"description\": \"d\", \"parameters\": {}},\n{\"name\": \"b\", \"description\": \"d\"}]}", line: 3, field: "initial[1].parameters", problem: "missing"},
		{name: "a tool twice", json: "{\"initial\": [\n{\"name\": \"a\", \"description\": \"d\", \"parameters\": {}},\n{\"name\": \"a\", \"description\": \"e\", \"parameters\": {}}]}", line: 3, field: "initial[1].name", problem: `tool "a" listed twice`},
		{name: "an unknown top-level key", json: `{"initial": [], "tools": []}`, line: 1, field: "tools", problem: "unknown field"},
		{name: "a truncated file", json: `{"initial": [`, line: 1, problem: "truncated JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := parseToolSchemas("rec", []byte(tc.json))
			if tc.problem == "" {
				if err != nil || len(ts.Initial) != 2 || ts.Initial[1].Name != "read" || ts.Initial[1].Line != 4 {
					t.Fatalf("parse = %+v, %v", ts, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.File != ToolSchemasFile || e.Line != tc.line || e.Field != tc.field || !strings.Contains(e.Problem, tc.problem) {
				t.Errorf("err = %v, want %s:%d field %s: %s", err, ToolSchemasFile, tc.line, tc.field, tc.problem)
			}
		})
	}
}

func TestToolsModeFromThePin(t *testing.T) {
	for rec, want := range map[string]string{"code-mode-turn": "code", "both-mode-turn": "both", "tool-call-turn": "native"} {
		r, err := Load(filepath.Join(transcripts, rec))
		if err != nil {
			t.Fatal(err)
		}
		if got, note := r.ToolsMode(); got != want || note != "" {
			t.Errorf("%s: tools mode %q (note %q), want %q from the pin", rec, got, note, want)
		}
		// Load reads the system prompt once, as paragraphs (tool-call-turn
		// has none)
		if codeOnly := slices.Contains(r.SystemPrompt, sdk.CodeOnly); (r.SystemPrompt == nil) != (want == "native") || codeOnly != (want == "code") {
			t.Errorf("%s: system prompt %d paragraphs, tools:code-only line %v", rec, len(r.SystemPrompt), codeOnly)
		}
	}
}

// TestToolsModeFromTheCalls: without the pin, the model's top-level calls
// decide, with a note, and a model that calls only run_code is both mode
// when the system prompt lacks the tools:code-only line; the pin, when
// present, wins and gives no note.
func TestToolsModeFromTheCalls(t *testing.T) {
	calls := func(names ...string) []Event {
		var evs []Event
		for i, n := range names {
			evs = append(evs, Event{Type: "tool/call", Seq: int64(i), Data: json.RawMessage(`{"turn":1,"step":1,"callId":"c","name":"` + n + `","arguments":"{}"}`)})
		}
		// a nested call is no top-level call
		return append(evs, Event{Type: "tool/code-dispatch-start", Data: json.RawMessage(`{"name":"bash"}`)})
	}
	tests := []struct {
		name       string
		events     []Event
		pin        *ToolSchemas
		prompt     []string
		want, note string
	}{
		{name: "run_code alone, no prompt", events: calls("run_code", "run_code"), want: "code", note: "tools mode code: no tool-schemas.expected.json; the model calls run_code and no other tool at top level (both mode offers the same run_code; nothing in the recording tells them apart)"},
		{name: "run_code alone, a prompt with the tools:code-only line", events: calls("run_code"), prompt: []string{"persona", sdk.CodeOnly}, want: "code", note: "tools mode code: no tool-schemas.expected.json; the model calls run_code and no other tool at top level; system-prompt.expected.md holds the tools:code-only line"},
		{name: "run_code alone, a prompt without it", events: calls("run_code"), prompt: []string{"persona"}, want: "both", note: "tools mode both: no tool-schemas.expected.json; the model calls only run_code, and system-prompt.expected.md lacks code mode's tools:code-only line"},
		{name: "run_code beside native tools: the prompt is not read", events: calls("run_code", "bash"), prompt: []string{sdk.CodeOnly}, want: "both", note: "tools mode both: no tool-schemas.expected.json; the model calls run_code and, at top level, bash"},
		{name: "run_code beside native tools", events: calls("read", "run_code", "bash", "read"), want: "both", note: "tools mode both: no tool-schemas.expected.json; the model calls run_code and, at top level, read, bash"},
		{name: "native tools only", events: calls("bash", "read"), want: "native"},
		{name: "no call", want: "native"},
		{name: "the pin wins", events: calls("run_code"), prompt: []string{"persona"}, pin: &ToolSchemas{Initial: []ToolSchema{{Name: "run_code"}, {Name: "bash"}}}, want: "both"},
		{name: "a native pin wins over a run_code call", events: calls("run_code"), pin: &ToolSchemas{Initial: []ToolSchema{{Name: "bash"}}}, want: "native"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Recording{Events: tc.events, Expectations: Expectations{ToolSchemas: tc.pin, SystemPrompt: tc.prompt}}
			if got, note := r.ToolsMode(); got != tc.want || note != tc.note {
				t.Errorf("ToolsMode = %q, %q; want %q, %q", got, note, tc.want, tc.note)
			}
		})
	}
}

// TestParseSessionNamesAMissingRequiredField: an event whose data lacks a
// field its type requires is refused naming the line, the field and the
// type; with the field present it loads.
func TestParseSessionNamesAMissingRequiredField(t *testing.T) {
	const header = `{"type":"session","version":0,"id":"x","createdAt":1,"cwd":"/w","delegationDepth":0}` + "\n"
	tests := []struct {
		typ, full, field string // full: data with every required field; field: the one dropped
	}{
		{"turn/start", `{"turn":1}`, "turn"},
		{"turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, "reason"},
		{"step/start", `{"turn":1,"step":1}`, "turn"},
		{"step/end", `{"turn":1,"step":1}`, "step"},
		{"user/message", `{"content":[],"source":{"kind":"user"}}`, "source"},
		{"assistant/chunk", `{"turn":1,"step":1,"chunk":{"index":0}}`, "chunk"},
		{"tool/call", `{"callId":"c","name":"bash","arguments":"{}"}`, "arguments"},
		{"approval/asked", `{"id":"a","toolName":"bash"}`, "toolName"},
		{"approval/decided", `{"id":"a","outcome":"approved"}`, "id"},
		{"tool/result", `{"message":{}}`, "message"},
		{"tool/code-dispatch-start", `{"rootCallId":"c","parentCallId":"c","subCallId":"c:code:1","name":"read","arguments":{}}`, "subCallId"},
		{"tool/code-dispatch", `{"rootCallId":"c","parentCallId":"c","subCallId":"c:code:1","name":"read","arguments":{},"isError":false,"content":[]}`, "isError"},
		{"compaction/start", `{"compactionId":"k","turn":1}`, "compactionId"},
		{"compaction/start", `{"compactionId":"k","turn":null}`, "turn"},
		{"compaction/end", `{"compactionId":"k","turn":1,"error":"x"}`, "turn"},
		{"compaction/summary", `{"compactionId":"k","summary":[],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":9}`, "shadowedRange"},
		{"compaction/summary", `{"compactionId":"k","summary":[],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":9}`, "shadowedTokenCount"},
	}
	for _, tc := range tests {
		t.Run(tc.typ+" "+tc.field, func(t *testing.T) {
			line := func(data string) []byte {
				return []byte(header + `{"type":"` + tc.typ + `","seq":0,"time":1,"data":` + data + "}\n")
			}
			if _, _, err := ParseSession("r", SessionFile, line(tc.full)); err != nil {
				t.Fatalf("with every required field: %v", err)
			}
			var data map[string]any
			if err := json.Unmarshal([]byte(tc.full), &data); err != nil {
				t.Fatal(err)
			}
			delete(data, tc.field)
			without, _ := json.Marshal(data)
			_, _, err := ParseSession("r", SessionFile, line(string(without)))
			var e *Error
			if !errors.As(err, &e) || e.Line != 2 || e.Field != "data."+tc.field || e.Problem != "missing (required in "+tc.typ+")" {
				t.Fatalf("without %s: %v, want line 2 field data.%s missing (required in %s)", tc.field, err, tc.field, tc.typ)
			}
		})
	}
}

// TestCopyTreeKeepsSymlinksInsideTheSeed: a symlink inside the seed is
// copied as a symlink (reading it reads its target); one to an absolute
// path or out of the seed is refused, naming it.
func TestCopyTreeKeepsSymlinksInsideTheSeed(t *testing.T) {
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "nested"), 0o755))
	must(os.WriteFile(filepath.Join(src, "nested", "target.md"), []byte("text\n"), 0o644))
	must(os.Symlink("target.md", filepath.Join(src, "nested", "AGENTS.md")))
	must(os.Symlink("nested/target.md", filepath.Join(src, "top.md")))
	dst := t.TempDir()
	must(CopyTree(src, dst))
	if link, err := os.Readlink(filepath.Join(dst, "nested", "AGENTS.md")); err != nil || link != "target.md" {
		t.Fatalf("nested/AGENTS.md: link %q, %v", link, err)
	}
	if data, err := os.ReadFile(filepath.Join(dst, "top.md")); err != nil || string(data) != "text\n" {
		t.Fatalf("top.md reads %q, %v", data, err)
	}
	for _, target := range []string{"/etc/passwd", "../outside", "nested/../../outside"} {
		bad := t.TempDir()
		must(os.Symlink(target, filepath.Join(bad, "link")))
		err := CopyTree(bad, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "link")) {
			t.Errorf("a link to %q: %v", target, err)
		}
	}
}

// TestNewInputSteps: the steps of turn kinds validate their fields.
func TestNewInputSteps(t *testing.T) {
	for _, tc := range []struct{ input, problem string }{
		{`{"steps":[{"op":"initialize"},{"op":"newSessionExpectError","additionalDirectories":["/x"]}]}`, ""},
		{`{"steps":[{"op":"promptExpectError","text":"fail"},{"op":"waitForTitleAfterTurnEnd","timeoutMs":5000}]}`, ""},
		{`{"steps":[{"op":"promptExpectError"}]}`, "a promptExpectError step needs a non-empty text"},
		{`{"steps":[{"op":"prompt","text":"x","additionalDirectories":["/x"]}]}`, "only a newSessionExpectError step sends additional directories"},
		// the goal suite's steps (upstream's harness: cancel, waitForGoalPhase,
		// waitForInboxMessage, waitForEventAfterTurnEnd)
		{`{"steps":[{"op":"cancel"},{"op":"cancel","waitForFile":{"path":".ready"}},{"op":"waitForEventAfterTurnEnd","type":"goal/change","timeoutMs":5000},{"op":"waitForGoalPhase","phase":"paused"},{"op":"waitForInboxMessage","text":"<goal_round>"}]}`, ""},
		{`{"steps":[{"op":"waitForEventAfterTurnEnd"}]}`, "steps[0].type: a waitForEventAfterTurnEnd step needs the event type it waits for"},
		{`{"steps":[{"op":"waitForTurnEnd","type":"goal/change"}]}`, "steps[0].type: only a waitForEventAfterTurnEnd step has a type"},
		{`{"steps":[{"op":"waitForGoalPhase","phase":"done"}]}`, `steps[0].phase: want one of active, paused, blocked, complete, got "done"`},
		{`{"steps":[{"op":"waitForGoalPhase"}]}`, `steps[0].phase: want one of active, paused, blocked, complete, got ""`},
		{`{"steps":[{"op":"cancel","phase":"paused"}]}`, "steps[0].phase: only a waitForGoalPhase step has a phase"},
		{`{"steps":[{"op":"waitForInboxMessage"}]}`, "steps[0].text: a waitForInboxMessage step needs the text it waits for"},
		{`{"steps":[{"op":"cancel","waitForFile":{"path":"../x"}}]}`, `want a path inside the workspace, got "../x"`},
		{`{"steps":[{"op":"prompt","text":"x","waitForFile":{"path":"x"}}]}`, "only a promptAndCancel or cancel step waits for a file"},
	} {
		dir := t.TempDir()
		for name, body := range map[string]string{InputFile: tc.input, SessionFile: `{"type":"session","version":0,"id":"x","createdAt":0,"delegationDepth":0}` + "\n", StdoutFile: ""} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(dir)
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s: %v", tc.input, err)
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
			t.Errorf("%s: %v, want %q", tc.input, err, tc.problem)
		}
	}
}

// TestSeedLinks: a listed path is accepted as a symlink or as a link stub
// (a plain file holding only a relative target inside the seed that names
// an entry of it), and restored as a symlink; anything else listed is an
// error naming the path, and a real file is never taken for a stub.
func TestSeedLinks(t *testing.T) {
	seed := t.TempDir()
	put := func(rel, content string) {
		t.Helper()
		p := filepath.Join(seed, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("AGENTS.canonical.md", "Root snapshot instruction.\n")
	put("AGENTS.md", "AGENTS.canonical.md")
	put("nested/AGENTS.canonical.md", "Nested snapshot instruction.\n")
	put("nested/AGENTS.md", "AGENTS.canonical.md")
	put("nested/up.md", "../AGENTS.canonical.md")
	if err := os.Symlink("AGENTS.canonical.md", filepath.Join(seed, "linked.md")); err != nil {
		t.Fatal(err)
	}
	put("with-newline.md", "AGENTS.canonical.md\n")
	put("absolute.md", "/etc/passwd")
	put("climbing.md", "../outside.md")
	put("dangling.md", "missing.md")
	put("empty.md", "")
	put("real.md", "Root snapshot instruction.")
	put("big.md", strings.Repeat("a", maxLinkStub+1))
	if err := os.MkdirAll(filepath.Join(seed, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}

	links, err := SeedLinks(seed, []string{"AGENTS.md", "nested/AGENTS.md", "nested/up.md", "linked.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []SeedLink{{"AGENTS.md", "AGENTS.canonical.md"}, {"nested/AGENTS.md", "AGENTS.canonical.md"}, {"nested/up.md", "../AGENTS.canonical.md"}, {"linked.md", ""}}
	if !slices.Equal(links, want) {
		t.Fatalf("links %v, want %v", links, want)
	}
	ws := t.TempDir()
	if err := CopyTree(seed, ws); err != nil {
		t.Fatal(err)
	}
	if err := RestoreLinks(ws, links); err != nil {
		t.Fatal(err)
	}
	for rel, text := range map[string]string{"AGENTS.md": "Root", "nested/AGENTS.md": "Nested", "nested/up.md": "Root", "linked.md": "Root"} {
		if _, err := os.Readlink(filepath.Join(ws, rel)); err != nil {
			t.Errorf("%s is not a symlink: %v", rel, err)
		}
		if data, _ := os.ReadFile(filepath.Join(ws, rel)); !strings.HasPrefix(string(data), text) {
			t.Errorf("%s reads %q, want %s...", rel, data, text)
		}
	}
	if fi, err := os.Lstat(filepath.Join(ws, "real.md")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("an unlisted file changed: %v %v", fi, err)
	}

	for _, c := range []struct{ path, problem string }{
		{"missing.md", "missing.md: not in the seed"},
		{"dir", "dir: neither a symlink nor a link stub"},
		{"with-newline.md", `with-newline.md: a plain file holding "AGENTS.canonical.md\n" is not a link stub`},
		{"absolute.md", `absolute.md: link stub: symlink to the absolute path "/etc/passwd"`},
		{"climbing.md", `climbing.md: link stub: symlink to "../outside.md" leaves the seed`},
		{"dangling.md", `dangling.md: a plain file holding "missing.md" is not a link stub: no such entry in the seed`},
		{"empty.md", "empty.md: a plain file of 0 bytes is not a link stub"},
		{"real.md", `real.md: a plain file holding "Root snapshot instruction." is not a link stub: no such entry`},
		{"big.md", "big.md: a plain file of 4097 bytes is not a link stub"},
	} {
		if _, err := SeedLinks(seed, []string{"AGENTS.md", c.path}); err == nil || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("%s: %v, want %q", c.path, err, c.problem)
		}
	}
}

// TestLoadChecksTheSeedLinks: a settings file listing a path the seed does
// not hold as a link or link stub is refused at load, naming workspace/,
// the key, the path and the settings file.
func TestLoadChecksTheSeedLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "links")
	if err := CopyTree(filepath.Join(transcripts, "agent-instructions"), dir); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(dir, SettingsFile)
	if err := os.WriteFile(settings, []byte(`{"symlinks": ["AGENTS.md", "nested/task.txt"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	var e *Error
	if !errors.As(err, &e) || e.File != WorkspaceDir || e.Field != "symlinks" || !strings.Contains(e.Problem, "nested/task.txt: a plain file holding") || !strings.Contains(e.Problem, "(listed by "+SettingsFile+")") {
		t.Fatalf("%v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, WorkspaceDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); !errors.As(err, &e) || e.File != WorkspaceDir || !strings.Contains(e.Problem, "missing, but "+SettingsFile+" lists symlinks in it") {
		t.Fatalf("no seed: %v", err)
	}
}

// A chunk's numbers are JSON.parse's: 1e999 (Infinity) loads, kept as its
// text so that the log refuses it as upstream's does, -1e-400 is -0, and
// every other number a float64; in an override and in the session log.
func TestChunkNumbersAreJavaScripts(t *testing.T) {
	chunk := `{"type":"finish","reason":{"kind":"error","failure":{"message":"m","code":"RATE_LIMIT","providerRetryAfterMs":1e999,"status":-1e-400,"n":[1.5,-1e999]}}}`
	check := func(t *testing.T, c map[string]any) {
		t.Helper()
		f := c["reason"].(map[string]any)["failure"].(map[string]any)
		if got, ok := f["providerRetryAfterMs"].(json.Number); !ok || got != "1e999" {
			t.Errorf("providerRetryAfterMs = %#v, want json.Number 1e999", f["providerRetryAfterMs"])
		}
		if got, ok := f["status"].(float64); !ok || got != 0 || !math.Signbit(got) {
			t.Errorf("status = %#v, want float64 -0", f["status"])
		}
		n := f["n"].([]any)
		if got, ok := n[0].(float64); !ok || got != 1.5 {
			t.Errorf("n[0] = %#v, want float64 1.5", n[0])
		}
		if got, ok := n[1].(json.Number); !ok || got != "-1e999" {
			t.Errorf("n[1] = %#v, want json.Number -1e999", n[1])
		}
	}
	t.Run("override", func(t *testing.T) {
		for _, doc := range []string{`[{"kind":"chunks","chunks":[` + chunk + `]}]`, `{"patches":[{"at":0,"entry":{"kind":"chunks","chunks":[` + chunk + `]}}]}`} {
			o, err := parseOverride("r", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			replies, err := o.apply("r", nil)
			if err != nil {
				t.Fatal(err)
			}
			check(t, replies[0].Chunks[0])
		}
	})
	t.Run("session log", func(t *testing.T) {
		s, err := deriveEvents("r", []Event{{Type: "assistant/chunk", Line: 2, Data: json.RawMessage(`{"turn":1,"step":1,"chunk":` + chunk + `}`)}})
		if err != nil {
			t.Fatal(err)
		}
		check(t, s.Replies[0].Chunks[0])
	})
}
