package recording

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	webHead   = `{"type":"session","version":0,"id":"{{sessionId}}","createdAt":0,"cwd":"{{cwd}}/workspace"}` + "\n"
	webPrompt = `{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"go"},{"type":"text","text":" on"}],"source":{"kind":"user","rpcId":"r"}}}` + "\n"
	webCtx    = `{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"Current runtime context."}],"source":{"kind":"plugin","plugin":"@deepseek-ai/dsh-system-prompt"}}}` + "\n"
	webTurn   = `{"type":"turn/start","seq":SEQ,"time":0,"data":{"turn":1}}` + "\n"
	webEnd    = `{"type":"turn/end","seq":SEQ,"time":0,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	// webEarlierResult is a tool/result in the earlier message shape.
	webEarlierResult = `{"type":"tool/result","seq":SEQ,"time":0,"data":{"turn":1,"step":1,"callId":"c","content":[],"isError":false}}` + "\n"
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
// sections); a switch after the first turn starts is not the head's; a log
// with no policy event takes deploymentMode (approval ask, never under
// danger-full-access).
func TestWebPolicyFromLogEvents(t *testing.T) {
	tests := []struct {
		name, log  string
		mode, appr string
		settings   string
	}{
		{"no events, deploymentMode", webTurn + webPrompt, "workspace-write", "ask", `{"deploymentMode":"workspace-write"}`},
		{"no events, deploymentMode danger", webTurn + webPrompt, "danger-full-access", "never", `{"deploymentMode":"danger-full-access"}`},
		{"the events win over deploymentMode", webHeadPolicy("read-only", "ask") + webTurn + webPrompt, "read-only", "ask", `{"deploymentMode":"danger-full-access"}`},
		{"head", webHeadPolicy("workspace-write", "ask") + webTurn + webPrompt + webCtx, "workspace-write", "ask", ""},
		{"danger, never", webHeadPolicy("danger-full-access", "never") + webTurn + webPrompt, "danger-full-access", "never", ""},
		{"a later switch is not the head's", webHeadPolicy("read-only", "ask") + webTurn + webPrompt + webEvent("sandbox/mode", "mode", "danger-full-access") + webEvent("approval/policy", "policy", "never"), "read-only", "ask", ""},
		{"the earlier shape, no policy: the web default", webTurn + webPrompt + webEarlierResult, WebDefaultMode, WebDefaultApproval, ""},
		{"the earlier shape with head events: theirs", webHeadPolicy("read-only", "ask") + webTurn + webPrompt + webEarlierResult, "read-only", "ask", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{SessionFile: webLog(tc.log), "ui.expected.md": ""}
			if tc.settings != "" {
				files[SettingsFile] = tc.settings
			}
			r, err := Load(writeRec(t, "w", files))
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.Policy()
			if err != nil || p.Mode != tc.mode || p.Approval != tc.appr || p.Default != (r.EarlierShape() > 0 && !strings.Contains(tc.log, "sandbox/mode")) {
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
		{"the earlier shape with a runtime context", webTurn + webPrompt + webCtx + webEarlierResult, "type", 2, "no sandbox/mode or approval/policy event before the first turn"},
		{"the earlier shape, policy after the turn only", webTurn + webPrompt + webEarlierResult + webEvent("sandbox/mode", "mode", "read-only") + webEvent("approval/policy", "policy", "ask"), "type", 2, "no sandbox/mode or approval/policy"},
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
	r, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(webHeadPolicy("read-only", "ask") + webTurn + webPrompt + webCtx + webEnd + webTurn + webPrompt), "ui.expected.md": ""}))
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
		{"the earlier tool/result shape without isError", map[string]string{SessionFile: webLog(webTurn + webPrompt + `{"type":"tool/result","seq":SEQ,"time":0,"data":{"turn":1,"step":1,"callId":"c","content":[]}}` + "\n")}, SessionFile, "data.isError", "missing (the earlier shape of tool/result"},
		{"a message steered in before the turn's first reply", map[string]string{SessionFile: webLog(webTurn + webPrompt + webCtx + webPrompt + webEnd + webTurn + webPrompt)}, SessionFile, "data.source", "a user's message inside turn 1, after its prompt and before any model reply"},
		{"a turn the user stopped", map[string]string{SessionFile: webLog(webTurn + webPrompt + `{"type":"turn/end","seq":SEQ,"time":0,"data":{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}` + "\n")}, SessionFile, "data.reason", "turn 1 ended aborted by the user (the web app's Stop generating)"},
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

// TestWebSteps: the steps are the log's /permission, /goal and /plan
// commands and prompts in order, a /plan's message its own (not a prompt);
// another command, a bad preset, a command without a name, a /plan whose
// message is missing or differs is refused naming the line and field.
func TestWebSteps(t *testing.T) {
	cmd := func(name, args string) string {
		return `{"type":"command/run","seq":SEQ,"time":0,"data":{"commandId":"c","name":"` + name + `","args":"` + args + `","source":{"kind":"user"}}}` + "\n"
	}
	r, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(cmd("permission", " read-only") + webHeadPolicy("read-only", "ask") + webTurn + webPrompt + webCtx + webEnd + cmd("permission", " danger-full-access") + webTurn + webPrompt), "ui.expected.md": ""}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Input.Steps {
		got = append(got, s.Op+" "+s.Text)
	}
	if want := []string{"permission read-only", "prompt go on", "permission danger-full-access", "prompt go on"}; !slices.Equal(got, want) || !r.SwitchesFirst() {
		t.Fatalf("steps %q (switches first: %v), want %q", got, r.SwitchesFirst(), want)
	}
	r, err = Load(writeRec(t, "w", map[string]string{SessionFile: webLog(cmd("goal", " ship it") + webTurn + cmd("plan", " go on ") + webPrompt + webEnd + cmd("plan", " off") + webTurn + webPrompt + webEnd + cmd("plan", "") + webTurn + webPrompt), "ui.expected.md": ""}))
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range r.Input.Steps {
		got = append(got, s.Op+" "+s.Text)
	}
	if want := []string{"goal  ship it", "plan  go on ", "plan  off", "prompt go on", "plan ", "prompt go on"}; !slices.Equal(got, want) {
		t.Fatalf("steps %q, want %q", got, want)
	}
	if _, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(cmd("goal", " x")), "ui.expected.md": ""})); err != nil {
		t.Fatalf("a session of a /goal command alone: %v", err)
	}
	if r, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(webHeadPolicy("read-only", "ask") + webTurn + webPrompt + cmd("permission", " read-only")), "ui.expected.md": ""})); err != nil || r.SwitchesFirst() {
		t.Fatalf("a session opening with a prompt: switches first %v, %v", err == nil && r.SwitchesFirst(), err)
	}
	bad := []struct {
		name, log, field, problemStart string
		line                           int
	}{
		{"another command", cmd("compact", " x") + webTurn + webPrompt, "data.name", "command /compact: the replay drives the web app's /permission, /goal, /plan commands only", 2},
		{"a /plan message that differs", cmd("plan", " stop") + webTurn + webPrompt, "data.content", `the message of the /plan command before it: want "stop", got "go on"`, 4},
		{"a /plan without its message", webTurn + webPrompt + cmd("plan", " x"), "", `no user/message for the /plan command's message "x"`, 0},
		{"a command before a /plan's message", cmd("plan", " go on") + cmd("goal", "") + webPrompt, "type", "a command/run before the message of the /plan command", 3},
		{"only /permission", cmd("permission", " read-only"), "", "no user/message with a user source and no /goal or /plan command", 0},
		{"a bad preset", cmd("permission", " full") + webTurn + webPrompt, "data.args", `/permission "full": want one of`, 2},
		{"no name", `{"type":"command/run","seq":SEQ,"time":0,"data":{"args":""}}` + "\n" + webTurn + webPrompt, "data.name", "missing", 2},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) { webLogRefused(t, tc.log, tc.line, tc.field, tc.problemStart) })
	}
}

// webLogRefused checks that a web recording of log is refused at line of
// session.jsonl, naming field, its problem starting so.
func webLogRefused(t *testing.T, log string, line int, field, problemStart string) {
	t.Helper()
	_, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(log), "ui.expected.md": ""}))
	var e *Error
	if !errors.As(err, &e) || e.File != SessionFile || e.Field != field || e.Line != line || !strings.HasPrefix(e.Problem, problemStart) {
		t.Fatalf("Load = %v (%#v); want line %d field %q problem %q...", err, e, line, field, problemStart)
	}
}

// TestUIAnswerSetting: uiAnswer is a web setting (allowed-once or
// rejected); another value, or the setting in another front end's
// recording, is refused naming the field.
func TestUIAnswerSetting(t *testing.T) {
	web := webLog(webHeadPolicy("read-only", "ask") + webTurn + webPrompt)
	for _, a := range []string{"allowed-once", "rejected"} {
		r, err := Load(writeRec(t, "w", map[string]string{SessionFile: web, "ui.expected.md": "", SettingsFile: `{"uiAnswer":"` + a + `"}`}))
		if err != nil || r.Settings.UIAnswer != a {
			t.Fatalf("uiAnswer %s: %v", a, err)
		}
	}
	if s := FrontendSuiteSettings[Web]["permission-policy-context"]; s.UIAnswer != "allowed-once" {
		t.Fatalf("permission-policy-context's suite setting uiAnswer = %q, want allowed-once (its e2e file answers every approval so)", s.UIAnswer)
	}
	bad := []struct {
		name         string
		files        map[string]string
		problemStart string
	}{
		{"a bad answer", map[string]string{SessionFile: web, "ui.expected.md": "", SettingsFile: `{"uiAnswer":"allowed-always"}`}, `want allowed-once or rejected, got "allowed-always"`},
		{"in an ACP recording", map[string]string{InputFile: promptInput, SessionFile: streamHead, StdoutFile: "", SettingsFile: `{"uiAnswer":"allowed-once"}`}, "set, but this is a acp recording"},
		{"in a headless recording", map[string]string{InputFile: promptInput, StreamFile: streamSplice + streamResult, SettingsFile: `{"uiAnswer":"allowed-once"}`}, "set, but this is a headless recording"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) { wantSettingsError(t, tc.files, "uiAnswer", tc.problemStart) })
	}
}

// TestUIQuestionsSetting: uiQuestions gives the web UI's answers by
// question id (question-composer's suite setting is its e2e file's); one
// without an id or a selected list, an id answered twice, or the setting
// in another front end's recording is refused naming the field.
func TestUIQuestionsSetting(t *testing.T) {
	web := webLog(webHeadPolicy("read-only", "ask") + webTurn + webPrompt)
	r, err := Load(writeRec(t, "w", map[string]string{SessionFile: web, "ui.expected.md": "", SettingsFile: `{"uiQuestions":[{"id":"a","selected":[]},{"id":"b","selected":["x"],"custom":"y"}]}`}))
	if err != nil || len(r.Settings.UIQuestions) != 2 || r.Settings.UIQuestions[1].Custom != "y" {
		t.Fatalf("uiQuestions: %v, %+v", err, r)
	}
	if s := FrontendSuiteSettings[Web]["question-composer"]; len(s.UIQuestions) != 1 || s.UIQuestions[0].ID != "color" || !slices.Equal(s.UIQuestions[0].Selected, []string{"Blue"}) || s.UIQuestions[0].Custom != "Include accessibility notes" {
		t.Fatalf("question-composer's suite setting uiQuestions = %+v, want its e2e file's answer", s.UIQuestions)
	}
	bad := []struct {
		name         string
		files        map[string]string
		problemStart string
	}{
		{"no id", map[string]string{SessionFile: web, "ui.expected.md": "", SettingsFile: `{"uiQuestions":[{"selected":[]}]}`}, "uiQuestions[0]: no id"},
		{"no selected list", map[string]string{SessionFile: web, "ui.expected.md": "", SettingsFile: `{"uiQuestions":[{"id":"a","selected":[]},{"id":"b"}]}`}, "uiQuestions[1] (b): no selected list"},
		{"an id twice", map[string]string{SessionFile: web, "ui.expected.md": "", SettingsFile: `{"uiQuestions":[{"id":"a","selected":[]},{"id":"a","selected":[]}]}`}, `uiQuestions[1]: question "a" answered twice`},
		{"in a headless recording", map[string]string{InputFile: promptInput, StreamFile: streamSplice + streamResult, SettingsFile: `{"uiQuestions":[{"id":"a","selected":[]}]}`}, "set, but this is a headless recording"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) { wantSettingsError(t, tc.files, "uiQuestions", tc.problemStart) })
	}
}

// wantSettingsError loads a recording of files and wants its settings
// refused at field with a problem starting problemStart.
func wantSettingsError(t *testing.T, files map[string]string, field, problemStart string) {
	t.Helper()
	_, err := Load(writeRec(t, "w", files))
	var e *Error
	if !errors.As(err, &e) || e.File != SettingsFile || e.Field != field || !strings.HasPrefix(e.Problem, problemStart) {
		t.Fatalf("Load = %v (%#v); want %s field %s problem %q...", err, e, SettingsFile, field, problemStart)
	}
}

// TestSteerPoints: a user's message inside a turn after a model reply of
// the turn is a steer step placed after the step of the last such reply
// (inside that step, after its tool result, in the web app's earlier
// shape; at the next step's start in rc.8's), direct when rc.8's splices
// show it steered with no queued row first; a message opening a turn is
// a prompt, also in the turn after; a user's message after a turn's
// opening and before any reply, or after a reply without its step, is
// refused naming its line and field.
func TestSteerPoints(t *testing.T) {
	step := func(kind string, n int) string {
		return `{"type":"step/` + kind + `","seq":SEQ,"time":0,"data":{"turn":1,"step":` + strconv.Itoa(n) + `}}` + "\n"
	}
	reply := func(n int) string {
		return `{"type":"assistant/message","seq":SEQ,"time":0,"data":{"turn":1,"step":` + strconv.Itoa(n) + `,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}}` + "\n"
	}
	steer := `{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"steer"}],"source":{"kind":"user","rpcId":"r"}}}` + "\n"
	steerID := func(id string) string {
		return `{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"steer"}],"source":{"kind":"user"},"role":"user","id":"` + id + `"}}` + "\n"
	}
	splice := func(target, id string) string {
		return `{"type":"agent/inbox/spliced","seq":SEQ,"time":0,"data":{"target":"` + target + `","start":0,"inserted":[{"content":[],"source":{"kind":"user"},"role":"user","id":"` + id + `"}]}}` + "\n"
	}
	goalRound := `{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"<goal_round>"}],"source":{"kind":"goal"}}}` + "\n"
	tests := []struct {
		name, log string
		want      []string // op text [turn step line]
	}{
		{"the earlier shape: inside the step, after its result", webTurn + step("start", 1) + webPrompt + reply(1) + webEarlierResult + steer + step("end", 1) + step("start", 2) + reply(2) + webEnd,
			[]string{"prompt go on", "steer steer 1 1 7"}},
		{"rc.8's shape: at the next step's start", webTurn + step("start", 1) + webPrompt + reply(1) + step("end", 1) + step("start", 2) + steer + reply(2) + webEnd,
			[]string{"prompt go on", "steer steer 1 1 8"}},
		{"two at one point, one after the next reply", webTurn + webPrompt + reply(1) + steer + steer + reply(2) + steer + reply(3) + webEnd,
			[]string{"prompt go on", "steer steer 1 1 5", "steer steer 1 1 6", "steer steer 1 2 8"}},
		{"the next turn's message is its prompt", webTurn + webPrompt + reply(1) + webEnd + webTurn + webPrompt + reply(1) + webEnd,
			[]string{"prompt go on", "prompt go on"}},
		{"a turn a goal round opened", webTurn + goalRound + reply(1) + steer + reply(2) + webEnd,
			[]string{"steer steer 1 1 5"}},
		{"rc.8's splices: a queued row, then one steered directly", webTurn + webPrompt + reply(1) + splice("next-turn", "q") + splice("next-step", "q") + splice("next-step", "d") + steerID("q") + steerID("d") + reply(2) + webEnd,
			[]string{"prompt go on", "steer steer 1 1 8", "steer steer 1 1 9 direct"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(tc.log), "ui.expected.md": ""}))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range r.Input.Steps {
				g := s.Op + " " + s.Text
				if s.At != nil {
					g += " " + strconv.Itoa(s.At.Turn) + " " + strconv.Itoa(s.At.Step) + " " + strconv.Itoa(s.At.Line)
					if s.At.Direct {
						g += " direct"
					}
				}
				got = append(got, g)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("steps %q, want %q", got, tc.want)
			}
		})
	}
	bad := []struct {
		name, log, field, problemStart string
		line                           int
	}{
		{"a second message before the turn's first reply", webTurn + webPrompt + webCtx + steer + reply(1), "data.source", "a user's message inside turn 1, after its prompt and before any model reply of the turn", 5},
		{"a reply without its step", webTurn + webPrompt + `{"type":"assistant/message","seq":SEQ,"time":0,"data":{"turn":1,"message":{"role":"assistant","content":[]}}}` + "\n" + steer, "data.step", "missing or not a number in the model reply a user's message was steered in after (line 5)", 4},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) { webLogRefused(t, tc.log, tc.line, tc.field, tc.problemStart) })
	}
}

// TestUserPlaces: each user's message (user source) with the number of
// model replies before it in the log; other messages are not places.
func TestUserPlaces(t *testing.T) {
	r, err := Load(writeRec(t, "w", map[string]string{SessionFile: webLog(webTurn + webPrompt + webCtx +
		`{"type":"assistant/message","seq":SEQ,"time":0,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[]}}}` + "\n" +
		`{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"steer"},{"type":"image","data":""}],"source":{"kind":"user"}}}` + "\n" + webEnd), "ui.expected.md": ""}))
	if err != nil {
		t.Fatal(err)
	}
	want := []UserPlace{{Text: "go on", Replies: 0, Line: 3}, {Text: "steer", Replies: 1, Line: 6}}
	if got := UserPlaces(r.Events); !slices.Equal(got, want) {
		t.Fatalf("UserPlaces = %+v, want %+v", got, want)
	}
}
