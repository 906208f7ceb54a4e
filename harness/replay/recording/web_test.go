package recording

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const (
	webHead   = `{"type":"session","version":0,"id":"{{sessionId}}","createdAt":0,"cwd":"{{cwd}}/workspace"}` + "\n"
	webPrompt = `{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"go"},{"type":"text","text":" on"}],"source":{"kind":"user","rpcId":"r"}}}` + "\n"
	webCtx    = `{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"Current runtime context."}],"source":{"kind":"plugin","plugin":"@deepseek-ai/dsh-system-prompt"}}}` + "\n"
	webTurn   = `{"type":"turn/start","seq":SEQ,"time":0,"data":{"turn":1}}` + "\n"
)

func webEvent(typ, field, value string) string {
	return `{"type":"` + typ + `","seq":SEQ,"time":0,"data":{"` + field + `":"` + value + `"}}` + "\n"
}

// webLog is a session log of the header and events, their seqs (SEQ)
// numbered from 0.
func webLog(events string) string {
	n := 0
	return webHead + regexp.MustCompile("SEQ").ReplaceAllStringFunc(events, func(string) string { n++; return strconv.Itoa(n - 1) })
}

// webHeadPolicy is the head a web session starts with under mode and
// approval policy.
func webHeadPolicy(mode, approval string) string {
	return webEvent("permission/preset", "preset", mode) + webEvent("sandbox/mode", "mode", mode) + webEvent("approval/policy", "policy", approval)
}

// TestWebPolicyFromLogEvents: a web log's policy is its sandbox/mode and
// approval/policy before the first turn (not a runtime context's
// sections); a switch after the first turn starts is not the head's.
func TestWebPolicyFromLogEvents(t *testing.T) {
	tests := []struct {
		name, log  string
		mode, appr string
	}{
		{"head", webHeadPolicy("workspace-write", "ask") + webTurn + webPrompt + webCtx, "workspace-write", "ask"},
		{"danger, never", webHeadPolicy("danger-full-access", "never") + webTurn + webPrompt, "danger-full-access", "never"},
		{"a later switch is not the head's", webHeadPolicy("read-only", "ask") + webTurn + webPrompt + webEvent("sandbox/mode", "mode", "danger-full-access") + webEvent("approval/policy", "policy", "never"), "read-only", "ask"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(tc.log), "ui.expected.md": ""}))
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.Policy()
			if err != nil || p.Mode != tc.mode || p.Approval != tc.appr {
				t.Fatalf("Policy = %+v, %v; want %s, %s", p, err, tc.mode, tc.appr)
			}
		})
	}
}

// TestWebPolicyRejectsNamingLineAndField: a web log whose policy events
// are missing or malformed is refused naming the line and field.
func TestWebPolicyRejectsNamingLineAndField(t *testing.T) {
	tests := []struct {
		name, log    string
		field        string
		line         int
		problemStart string
	}{
		{"no policy events", webTurn + webPrompt, "type", 2, "no sandbox/mode or approval/policy event before the first turn"},
		{"policy after the turn only", webTurn + webPrompt + webEvent("sandbox/mode", "mode", "read-only") + webEvent("approval/policy", "policy", "ask"), "type", 2, "no sandbox/mode or approval/policy"},
		{"no approval", webEvent("sandbox/mode", "mode", "read-only") + webTurn + webPrompt, "type", 3, "a sandbox/mode and no approval/policy"},
		{"no mode", webEvent("approval/policy", "policy", "ask") + webTurn + webPrompt, "type", 3, "an approval/policy and no sandbox/mode"},
		{"unknown mode", webEvent("sandbox/mode", "mode", "write-all") + webTurn + webPrompt, "data.mode", 2, "want one of read-only, workspace-write, danger-full-access"},
		{"unknown preset", webEvent("permission/preset", "preset", "auto") + webTurn + webPrompt, "data.preset", 2, "want one of"},
		{"unknown approval", webHeadPolicy("read-only", "on-request") + webTurn + webPrompt, "data.policy", 4, "want one of ask, never"},
		{"missing mode", `{"type":"sandbox/mode","seq":SEQ,"time":0,"data":{}}` + "\n" + webTurn + webPrompt, "data.mode", 2, "missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(tc.log), "ui.expected.md": ""}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Policy()
			var e *Error
			if !errors.As(err, &e) || e.File != SessionFile || e.Field != tc.field || e.Line != tc.line || !strings.HasPrefix(e.Problem, tc.problemStart) {
				t.Fatalf("Policy: %v (%#v); want %s:%d field %q problem %q...", err, e, SessionFile, tc.line, tc.field, tc.problemStart)
			}
		})
	}
}

// TestWebLoad: a web recording's steps are its log's user prompts (text
// blocks joined; plugin messages are not prompts); input.json or a prompt
// setting is refused, and so is a log without a prompt.
func TestWebLoad(t *testing.T) {
	r, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(webHeadPolicy("read-only", "ask") + webTurn + webPrompt + webCtx + webPrompt), "ui.expected.md": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Frontend != Web || len(r.Input.Steps) != 2 || r.Input.Steps[0].Op != "prompt" || r.Input.Steps[0].Text != "go on" || r.Input.Steps[1].Text != "go on" {
		t.Fatalf("loaded %q, steps %+v", r.Frontend, r.Input.Steps)
	}
	bad := []struct {
		name         string
		files        map[string]string
		file, field  string
		problemStart string
	}{
		{"input.json", map[string]string{InputFile: promptInput}, InputFile, "", "in a web recording"},
		{"a prompt setting", map[string]string{SettingsFile: `{"prompt":"x"}`}, SettingsFile, "prompt", "set, but a web recording's prompts"},
		{"no prompt", map[string]string{SessionFile: webLog(webHeadPolicy("read-only", "ask") + webTurn + webCtx)}, SessionFile, "", "no user/message with a user source"},
		{"a prompt without content", map[string]string{SessionFile: webLog(webTurn + `{"type":"user/message","seq":SEQ,"time":0,"data":{"source":{"kind":"user"}}}` + "\n")}, SessionFile, "data.content", "missing"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{SessionFile: webLog(webTurn + webPrompt), "ui.expected.md": ""}
			for k, v := range tc.files {
				files[k] = v
			}
			_, err := Load(writeRec(t, "w", files))
			var e *Error
			if !errors.As(err, &e) || e.File != tc.file || e.Field != tc.field || !strings.HasPrefix(e.Problem, tc.problemStart) {
				t.Fatalf("Load = %v (%#v); want %s field %q problem %q...", err, e, tc.file, tc.field, tc.problemStart)
			}
		})
	}
}

// TestLogsInboxSplices: only a web log without agent/inbox/spliced says
// its composition logged no splices.
func TestLogsInboxSplices(t *testing.T) {
	tests := []struct {
		name  string
		fe    Frontend
		types []string
		want  bool
	}{
		{"web without splices", Web, []string{"turn/start"}, false},
		{"web with a splice", Web, []string{"turn/start", "agent/inbox/spliced"}, true},
		{"headless without splices", Headless, []string{"turn/start"}, true},
		{"acp", ACP, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Recording{Frontend: tc.fe}
			for _, typ := range tc.types {
				r.Events = append(r.Events, Event{Type: typ})
			}
			if got := r.LogsInboxSplices(); got != tc.want {
				t.Fatalf("LogsInboxSplices = %v, want %v", got, tc.want)
			}
		})
	}
}
