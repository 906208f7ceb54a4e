package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/hooks"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
)

// rig is one session with a pipeline whose only tool is a constructed
// "bash" (it runs nothing; it records its calls and answers HELLO), and the
// two bridges loaded from the workspace, Claude Code first.
type rig struct {
	t       *testing.T
	ws      string
	log     *session.Log
	reg     *pipeline.Registry
	agent   *pipeline.Agent
	bridges []*hooks.Bridge

	mu    sync.Mutex
	calls []string // arguments of every body run
}

type rigOption func(*hooks.Options)

func strict(o *hooks.Options) { o.Strict = true }

// newRig writes files into a fresh workspace and loads both bridges from it.
func newRig(t *testing.T, files map[string]string, opts ...rigOption) *rig {
	t.Helper()
	return newRigIn(t, t.TempDir(), files, opts...)
}

// newRigIn is newRig with the workspace ws.
func newRigIn(t *testing.T, ws string, files map[string]string, opts ...rigOption) *rig {
	t.Helper()
	r := &rig{t: t, ws: ws}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(r.ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.log = sessiontest.New(t, "sess-1", r.ws)
	sessiontest.StartTurn(t, r.log)
	r.agent = &pipeline.Agent{ID: "root", Session: r.log}
	r.reg = pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {}))
	if _, err := r.reg.Register(pipeline.Tool{Name: "bash", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		r.mu.Lock()
		r.calls = append(r.calls, string(call.Args()))
		r.mu.Unlock()
		return pipeline.Output{Value: json.RawMessage(`"HELLO\n"`), Content: []pipeline.Block{pipeline.TextBlock("HELLO\n")}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	for _, d := range hooks.Dialects {
		o := hooks.Options{ConfigPath: "./" + d.File, BaseDir: r.ws,
			Runtime: hooks.Runtime{Sandbox: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: r.ws}, OutputDir: t.TempDir()}}
		for _, opt := range opts {
			opt(&o)
		}
		b, err := hooks.Load(d, o)
		if err != nil {
			t.Fatal(err)
		}
		b.Register(r.reg)
		r.bridges = append(r.bridges, b)
	}
	return r
}

func (r *rig) exec(ctx context.Context, callID string, args string) pipeline.Result {
	return r.reg.Execute(pipeline.NewCall(callID, "bash", json.RawMessage(args), r.agent, ctx))
}

func (r *rig) run(args string) pipeline.Result { return r.exec(context.Background(), "call_1", args) }

func (r *rig) bodyRuns() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// hookEvents returns the hook/* events of the log with durationMs set to 0.
func (r *rig) hookEvents() []map[string]any {
	r.t.Helper()
	evs, err := r.log.Events()
	if err != nil {
		r.t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range evs {
		if !strings.HasPrefix(e.Type, "hook/") {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			r.t.Fatal(err)
		}
		if _, ok := d["durationMs"].(float64); ok {
			d["durationMs"] = 0.0
		}
		d["type"] = e.Type
		out = append(out, d)
	}
	return out
}

func (r *rig) file(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(r.ws, name))
	return string(b), err == nil
}

// pre and post write a one-group config of one point.
func config(point, matcher string, hooksJSON ...string) string {
	m := ""
	if matcher != "-" {
		m = `"matcher": ` + matcher + `, `
	}
	return `{"hooks": {"` + point + `": [{` + m + `"hooks": [` + strings.Join(hooksJSON, ",") + `]}]}}`
}

func cmd(command string) string {
	b, _ := json.Marshal(command)
	return `{"type": "command", "command": ` + string(b) + `}`
}

func cmdTimeout(command string, timeout string) string {
	b, _ := json.Marshal(command)
	return `{"type": "command", "command": ` + string(b) + `, "timeout": ` + timeout + `}`
}

func invoked(point, dialect, id string, matcher *string) map[string]any {
	m := map[string]any{"type": "hook/invoked", "turn": 1.0, "point": point, "dialect": dialect, "handlerId": id}
	if matcher != nil {
		m["matcher"] = *matcher
	}
	return m
}

func result(point, id, decision string, exit *int, stderr string) map[string]any {
	m := map[string]any{"type": "hook/result", "turn": 1.0, "point": point, "handlerId": id, "decision": decision, "durationMs": 0.0}
	if exit != nil {
		m["exitCode"] = float64(*exit)
	}
	if stderr != "" {
		m["stderrSummary"] = stderr
	}
	return m
}

func s(v string) *string { return &v }
func n(v int) *int       { return &v }

const echoArgs = `{"command": "echo HELLO", "description": "Run echo HELLO"}`

func wantResult(t *testing.T, res pipeline.Result, text string, isError bool) {
	t.Helper()
	if got := res.Text(); got != text || res.IsError != isError {
		t.Errorf("result %q (isError %v), want %q (isError %v)", got, res.IsError, text, isError)
	}
}

func wantEvents(t *testing.T, r *rig, want ...map[string]any) {
	t.Helper()
	if diff := cmp.Diff(want, r.hookEvents()); diff != "" {
		t.Errorf("hook events (-want +got):\n%s", diff)
	}
}

// hook-cc-pretool-deny and hook-codex-pretool-block, end to end.
func TestPreExit2Denies(t *testing.T) {
	for _, d := range hooks.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			r := newRig(t, map[string]string{d.File: config("PreToolUse", `"bash"`, cmd("echo 'bash is disabled by policy in this session' >&2; exit 2"))})
			res := r.run(echoArgs)
			wantResult(t, res, "Error: bash is disabled by policy in this session", true)
			if res.Error == nil || res.Error.Info != nil {
				t.Errorf("a denial has error.message and no info: %+v", res.Error)
			}
			if r.bodyRuns() != 0 {
				t.Error("the denied tool ran")
			}
			wantEvents(t, r,
				invoked("PreToolUse", d.Name, d.Name+":PreToolUse:1", s("bash")),
				result("PreToolUse", d.Name+":PreToolUse:1", "block", n(2), "bash is disabled by policy in this session"))
		})
	}
}

func TestPreExit2WithoutStderrUsesTheFallback(t *testing.T) {
	for _, d := range hooks.Dialects {
		r := newRig(t, map[string]string{d.File: config("PreToolUse", "-", cmd("exit 2"))})
		wantResult(t, r.run(echoArgs), "Error: blocked by PreToolUse hook", true)
		wantEvents(t, r, invoked("PreToolUse", d.Name, d.Name+":PreToolUse:1", nil), result("PreToolUse", d.Name+":PreToolUse:1", "block", n(2), ""))
	}
}

// approver is a constructed user answering every request with one outcome.
type approver struct {
	outcome pipeline.ApprovalOutcome
	reasons []string
}

func (a *approver) Request(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	a.reasons = append(a.reasons, req.Reason)
	return a.outcome, nil
}

const askJSON = `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"confirm bash"}}'`

func TestPreAsk(t *testing.T) {
	tests := []struct {
		name    string
		d       *hooks.Dialect
		outcome pipeline.ApprovalOutcome
		text    string
		isError bool
		asked   []string
	}{
		{"claude-code ask rejected", hooks.ClaudeCode, pipeline.Rejected, `Error: the user rejected tool "bash"`, true, []string{"confirm bash"}},
		{"claude-code ask cancelled", hooks.ClaudeCode, pipeline.Cancelled, `Error: approval for tool "bash" was cancelled`, true, []string{"confirm bash"}},
		{"claude-code ask unavailable", hooks.ClaudeCode, pipeline.Unavailable, `Error: tool "bash" requires approval, but no approval channel is available`, true, []string{"confirm bash"}},
		{"claude-code ask allowed once", hooks.ClaudeCode, pipeline.AllowedOnce, "HELLO\n", false, []string{"confirm bash"}},
		{"codex ask is never asked: the call runs", hooks.Codex, pipeline.Rejected, "HELLO\n", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, map[string]string{tt.d.File: config("PreToolUse", `"bash"`, cmd(askJSON))})
			a := &approver{outcome: tt.outcome}
			r.reg.SetApprover(a)
			wantResult(t, r.run(echoArgs), tt.text, tt.isError)
			if diff := cmp.Diff(tt.asked, a.reasons); diff != "" {
				t.Errorf("approval reasons (-want +got):\n%s", diff)
			}
			wantEvents(t, r, invoked("PreToolUse", tt.d.Name, tt.d.Name+":PreToolUse:1", s("bash")), result("PreToolUse", tt.d.Name+":PreToolUse:1", "ask", n(0), ""))
		})
	}
}

func TestPreAskWithoutApprovalService(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmd(askJSON))})
	wantResult(t, r.run(echoArgs), "Error: confirm bash", true)
	r = newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmd(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'`))})
	wantResult(t, r.run(echoArgs), `Error: tool "bash" requires approval (not yet supported)`, true)
}

// An allow decision delegates: a listener inside the bridge still denies.
func TestPreAllowPreApprovesNothing(t *testing.T) {
	for _, d := range hooks.Dialects {
		for _, out := range []string{
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`,
			`{"decision":"approve"}`,
		} {
			r := newRig(t, map[string]string{d.File: config("PreToolUse", "-", cmd("echo '"+out+"'"))})
			r.reg.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				return pipeline.Deny("inner listener says no"), nil
			})
			wantResult(t, r.run(echoArgs), "Error: inner listener says no", true)
			ev := r.hookEvents()
			if len(ev) != 2 || (ev[1]["decision"] != "allow" && ev[1]["decision"] != "approve") {
				t.Errorf("%s: events %v", d.Name, ev)
			}
		}
	}
}

// Every matching hook runs and is logged, even after a deny; reasons of the
// winning rank are joined; handler ids count every run of the bridge.
func TestNoShortCircuitAndMerge(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": `{"hooks": {
		"PreToolUse": [
			{"matcher": "bash", "hooks": [` + cmd("echo first >&2; exit 2") + `, ` + cmd("echo ran > second; exit 0") + `]},
			{"matcher": "read", "hooks": [` + cmd("echo never > third") + `]},
			{"matcher": "ba.h", "hooks": [` + cmd("echo again >&2; exit 2") + `]}
		],
		"PostToolUse": [{"hooks": [` + cmd("exit 0") + `]}]}}`})
	wantResult(t, r.run(echoArgs), "Error: first\n\nagain", true)
	if _, ok := r.file("second"); !ok {
		t.Error("the second hook did not run after the first denied")
	}
	if _, ok := r.file("third"); ok {
		t.Error("a hook whose matcher does not match ran")
	}
	wantEvents(t, r,
		invoked("PreToolUse", "claude-code", "claude-code:PreToolUse:1", s("bash")),
		result("PreToolUse", "claude-code:PreToolUse:1", "block", n(2), "first"),
		invoked("PreToolUse", "claude-code", "claude-code:PreToolUse:2", s("bash")),
		result("PreToolUse", "claude-code:PreToolUse:2", "pass", n(0), ""),
		invoked("PreToolUse", "claude-code", "claude-code:PreToolUse:3", s("ba.h")),
		result("PreToolUse", "claude-code:PreToolUse:3", "block", n(2), "again"),
		invoked("PostToolUse", "claude-code", "claude-code:PostToolUse:4", nil),
		result("PostToolUse", "claude-code:PostToolUse:4", "pass", n(0), ""))
}

// Claude Code is the outer listener: its deny means Codex never runs; its
// pass lets a Codex deny decide.
func TestBothBridges(t *testing.T) {
	r := newRig(t, map[string]string{
		"hooks.json":       config("PreToolUse", "-", cmd("echo cc >&2; exit 2")),
		"codex-hooks.json": config("PreToolUse", "-", cmd("echo ran > codex-ran; exit 2")),
	})
	wantResult(t, r.run(echoArgs), "Error: cc", true)
	if _, ok := r.file("codex-ran"); ok {
		t.Error("a Codex hook ran after the Claude Code bridge denied")
	}
	r = newRig(t, map[string]string{
		"hooks.json":       config("PreToolUse", "-", cmd("exit 0")),
		"codex-hooks.json": config("PreToolUse", "-", cmd("echo codex says no >&2; exit 2")),
	})
	wantResult(t, r.run(echoArgs), "Error: codex says no", true)
	wantEvents(t, r,
		invoked("PreToolUse", "claude-code", "claude-code:PreToolUse:1", nil),
		result("PreToolUse", "claude-code:PreToolUse:1", "pass", n(0), ""),
		invoked("PreToolUse", "codex", "codex:PreToolUse:1", nil),
		result("PreToolUse", "codex:PreToolUse:1", "block", n(2), "codex says no"))
}

const ctxJSON = `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"%s"}}'`

func ctxCmd(text string) string { return cmd(strings.Replace(ctxJSON, "%s", text, 1)) }

func TestPostBlockAndContext(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		text     string
		isError  bool
		messages []pipeline.ContextMessage
	}{
		{"claude-code block: the reason without Error:", map[string]string{"hooks.json": config("PostToolUse", `"bash"`, cmd("echo 'tool output rejected by policy: retry once' >&2; exit 2"))},
			"tool output rejected by policy: retry once", true, nil},
		{"codex block without reason", map[string]string{"codex-hooks.json": config("PostToolUse", `"bash"`, cmd("exit 2"))},
			"blocked by PostToolUse hook", true, nil},
		{"claude-code context", map[string]string{"hooks.json": config("PostToolUse", "-", ctxCmd("Note: verified."))},
			"HELLO\n", false, []pipeline.ContextMessage{{Plugin: "hooks-claude-code", Texts: []string{"Note: verified."}}}},
		{"two contexts of one bridge are one message", map[string]string{"codex-hooks.json": config("PostToolUse", "-", ctxCmd("a"), ctxCmd("b"))},
			"HELLO\n", false, []pipeline.ContextMessage{{Plugin: "hooks-codex", Texts: []string{"a", "b"}}}},
		{"block with context keeps both", map[string]string{"hooks.json": config("PostToolUse", "-", cmd(`echo '{"decision":"block","reason":"bad","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"why"}}'`))},
			"bad", true, []pipeline.ContextMessage{{Plugin: "hooks-claude-code", Texts: []string{"why"}}}},
		{"claude-code context + codex block: the block carries both, claude-code first", map[string]string{
			"hooks.json":       config("PostToolUse", "-", ctxCmd("cc")),
			"codex-hooks.json": config("PostToolUse", "-", cmd(`echo '{"decision":"block","reason":"cx no","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"cx"}}'`))},
			"cx no", true, []pipeline.ContextMessage{{Plugin: "hooks-claude-code", Texts: []string{"cc"}}, {Plugin: "hooks-codex", Texts: []string{"cx"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.files)
			res := r.run(echoArgs)
			wantResult(t, res, tt.text, tt.isError)
			if r.bodyRuns() != 1 {
				t.Errorf("body runs = %d, want 1 (post hooks run after the body)", r.bodyRuns())
			}
			if diff := cmp.Diff(tt.messages, res.ContextMessages); diff != "" {
				t.Errorf("context messages (-want +got):\n%s", diff)
			}
		})
	}
}

// PostToolUse also fires for a call denied before it ran, with the denial as
// tool_response.
func TestPostSeesDenials(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": `{"hooks": {
		"PreToolUse": [{"hooks": [` + cmd("echo no >&2; exit 2") + `]}],
		"PostToolUse": [{"hooks": [` + cmd("cat > post-stdin") + `]}]}}`})
	wantResult(t, r.run(echoArgs), "Error: no", true)
	stdin, _ := r.file("post-stdin")
	if !strings.Contains(stdin, `"hook_event_name":"PostToolUse"`) || !strings.HasSuffix(stdin, `"tool_response":"Error: no"}`+"\n") {
		t.Errorf("post stdin: %s", stdin)
	}
	ids := []string{}
	for _, e := range r.hookEvents() {
		if e["type"] == "hook/invoked" {
			ids = append(ids, e["handlerId"].(string))
		}
	}
	if diff := cmp.Diff([]string{"claude-code:PreToolUse:1", "claude-code:PostToolUse:2"}, ids); diff != "" {
		t.Errorf("handler ids (-want +got):\n%s", diff)
	}
}

// The hook gets the payload on stdin, runs in the session cwd with the
// filtered environment.
func TestProcessFacts(t *testing.T) {
	for _, d := range hooks.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			parent := []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "OPENAI_API_KEY=sk-123", "DSH_SNAPSHOT=replay", "TERM=xterm"}
			r := newRig(t, map[string]string{d.File: config("PreToolUse", "-", cmd("cat > stdin.bin; pwd > where; env | sort > env.txt"))},
				func(o *hooks.Options) { o.Runtime.Env = parent })
			wantResult(t, r.run(echoArgs), "HELLO\n", false)
			stdin, _ := r.file("stdin.bin")
			var want string
			if d == hooks.ClaudeCode {
				want = `{"session_id":"sess-1","transcript_path":"` + r.log.Path() + `","cwd":"` + r.ws + `","hook_event_name":"PreToolUse","tool_name":"bash","tool_input":{"command":"echo HELLO","description":"Run echo HELLO"},"tool_use_id":"call_1"}` + "\n"
			} else {
				want = `{"session_id":"sess-1","transcript_path":"` + r.log.Path() + `","cwd":"` + r.ws + `","hook_event_name":"PreToolUse","model":"","permission_mode":"default","turn_id":"1","tool_name":"bash","tool_input":{"command":"echo HELLO"},"tool_use_id":"call_1"}`
			}
			if stdin != want {
				t.Errorf("stdin:\n got  %s\n want %s", stdin, want)
			}
			where, _ := r.file("where")
			if real, _ := filepath.EvalSymlinks(r.ws); strings.TrimSpace(where) != r.ws && strings.TrimSpace(where) != real {
				t.Errorf("hook ran in %q, want the session cwd %q", where, r.ws)
			}
			env, _ := r.file("env.txt")
			for _, bad := range []string{"OPENAI_API_KEY", "DSH_SNAPSHOT", "TERM=xterm"} {
				if strings.Contains(env, bad) {
					t.Errorf("environment leaks %s:\n%s", bad, env)
				}
			}
			for _, good := range []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "HOME=/nonexistent"} {
				if !strings.Contains(env, good+"\n") {
					t.Errorf("environment lacks %s:\n%s", good, env)
				}
			}
			hasProject := strings.Contains(env, "CLAUDE_PROJECT_DIR="+r.ws+"\n")
			if hasProject != (d == hooks.ClaudeCode) {
				t.Errorf("CLAUDE_PROJECT_DIR set = %v for %s:\n%s", hasProject, d.Name, env)
			}
		})
	}
}

// An agentless call still runs hooks (deny denies, contexts attach) but
// nothing is logged.
func TestAgentlessCall(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": `{"hooks": {
		"PreToolUse": [{"matcher": "bash", "hooks": [` + cmd("echo no >&2; exit 2") + `]}],
		"PostToolUse": [{"hooks": [` + ctxCmd("c") + `]}]}}`})
	res := r.reg.Execute(pipeline.NewCall("c1", "bash", json.RawMessage(echoArgs), nil, context.Background()))
	wantResult(t, res, "Error: no", true)
	if len(res.ContextMessages) != 1 {
		t.Errorf("context messages: %+v", res.ContextMessages)
	}
	if ev := r.hookEvents(); len(ev) != 0 {
		t.Errorf("an agentless call logged %v", ev)
	}
	// The numbers were still consumed.
	r.run(echoArgs)
	if ev := r.hookEvents(); len(ev) == 0 || ev[0]["handlerId"] != "claude-code:PreToolUse:3" {
		t.Errorf("handler id after an agentless call: %v", ev)
	}
}

// Logging needs a turn: a session without turn/start runs hooks silently.
func TestNoTurnNoEvents(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "hooks.json"), []byte(config("PreToolUse", "-", cmd("exit 2"))), 0o644)
	log := sessiontest.New(t, "s", ws)
	b, _ := hooks.Load(hooks.ClaudeCode, hooks.Options{ConfigPath: "hooks.json", BaseDir: ws, Runtime: hooks.Runtime{Sandbox: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}}})
	reg := pipeline.NewRegistry()
	reg.Register(pipeline.Tool{Name: "bash", Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) { return pipeline.Output{}, nil }})
	b.Register(reg)
	res := reg.Execute(pipeline.NewCall("c", "bash", json.RawMessage(`{}`), &pipeline.Agent{ID: "a", Session: log}, context.Background()))
	wantResult(t, res, "Error: blocked by PreToolUse hook", true)
	evs, _ := log.Events()
	if len(evs) != 0 {
		t.Errorf("events without a turn: %v", evs)
	}
}

// A session log that cannot be appended to fails the call: nothing runs
// unlogged.
func TestLogFailureFailsClosed(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": config("PreToolUse", "-", cmd("echo ran > ran"))})
	r.log.Close()
	res := r.run(echoArgs)
	if !res.IsError || r.bodyRuns() != 0 {
		t.Fatalf("a call whose hook could not be logged ran: %+v", res)
	}
	if _, ok := r.file("ran"); ok {
		t.Error("the hook ran although hook/invoked could not be appended")
	}
	if !strings.Contains(res.Text(), "hook/invoked") {
		t.Errorf("the error should name the event: %s", res.Text())
	}
}
