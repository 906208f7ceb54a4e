package sims

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/hooks"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
)

// hookCase is one session: the config files, how the constructed user
// answers, and whether the strict switch is on.
type hookCase struct {
	title  string
	files  map[string]string // hooks.json / codex-hooks.json
	answer pipeline.ApprovalOutcome
	strict bool
}

// hookGroup is a one-group config of one point for one tool matcher.
func hookGroup(point, matcher string, commands ...string) string {
	var hs []string
	for _, c := range commands {
		hs = append(hs, `{"type":"command","command":`+jsjson.Quote(c)+`}`)
	}
	return `{"hooks":{"` + point + `":[{"matcher":"` + matcher + `","hooks":[` + strings.Join(hs, ",") + `]}]}}`
}

func hookTimeout(point, command, timeout string) string {
	return `{"hooks":{"` + point + `":[{"matcher":"bash","hooks":[{"type":"command","command":` + jsjson.Quote(command) + `,"timeout":` + timeout + `}]}]}}`
}

// hookSimArgs are the arguments of the model's one call in every case.
const hookSimArgs = `{"command":"echo HELLO","description":"Print HELLO"}`

const (
	ccFile = "hooks.json"
	cxFile = "codex-hooks.json"
)

func permission(decision, reason string) string {
	r := ""
	if reason != "" {
		r = `,"permissionDecisionReason":"` + reason + `"`
	}
	return `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + decision + `"` + r + `}}'`
}

func postContext(text string) string {
	return `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"` + text + `"}}'`
}

func hookCases() []hookCase {
	var cases []hookCase
	for _, d := range hooks.Dialects {
		f := d.File
		cases = append(cases,
			hookCase{title: d.Name + " PreToolUse: exit 2 with a reason", files: map[string]string{f: hookGroup("PreToolUse", "bash", "echo 'bash is disabled by policy' >&2; exit 2")}},
			hookCase{title: d.Name + " PreToolUse: exit 2, nothing on stderr", files: map[string]string{f: hookGroup("PreToolUse", "bash", "exit 2")}},
			hookCase{title: d.Name + " PreToolUse: permissionDecision deny", files: map[string]string{f: hookGroup("PreToolUse", "bash", permission("deny", "no shell today"))}},
			hookCase{title: d.Name + " PreToolUse: decision block", files: map[string]string{f: hookGroup("PreToolUse", "bash", `echo '{"decision":"block","reason":"blocked by JSON"}'`)}},
			hookCase{title: d.Name + " PreToolUse: permissionDecision ask; the user rejects", answer: pipeline.Rejected, files: map[string]string{f: hookGroup("PreToolUse", "bash", permission("ask", "run a shell command?"))}},
			hookCase{title: d.Name + " PreToolUse: permissionDecision ask; the user allows once", answer: pipeline.AllowedOnce, files: map[string]string{f: hookGroup("PreToolUse", "bash", permission("ask", "run a shell command?"))}},
			hookCase{title: d.Name + " PreToolUse: permissionDecision allow", files: map[string]string{f: hookGroup("PreToolUse", "bash", permission("allow", "fine"))}},
			hookCase{title: d.Name + " PreToolUse: decision approve", files: map[string]string{f: hookGroup("PreToolUse", "bash", `echo '{"decision":"approve"}'`)}},
			hookCase{title: d.Name + " PreToolUse: continue false", files: map[string]string{f: hookGroup("PreToolUse", "bash", `echo '{"continue":false,"stopReason":"enough"}'`)}},
			hookCase{title: d.Name + " PreToolUse: exit 0, no output", files: map[string]string{f: hookGroup("PreToolUse", "bash", "exit 0")}},
			hookCase{title: d.Name + " PreToolUse: a matcher that does not match", files: map[string]string{f: hookGroup("PreToolUse", "^read$", "exit 2")}},
			hookCase{title: d.Name + " PostToolUse: exit 2 with a reason", files: map[string]string{f: hookGroup("PostToolUse", "bash", "echo 'tool output rejected by policy' >&2; exit 2")}},
			hookCase{title: d.Name + " PostToolUse: exit 2, nothing on stderr", files: map[string]string{f: hookGroup("PostToolUse", "bash", "exit 2")}},
			hookCase{title: d.Name + " PostToolUse: additionalContext", files: map[string]string{f: hookGroup("PostToolUse", "bash", postContext("Note: output verified."))}},
			hookCase{title: d.Name + " PostToolUse: decision block with additionalContext", files: map[string]string{f: hookGroup("PostToolUse", "bash",
				`echo '{"decision":"block","reason":"bad output","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"why it was bad"}}'`)}},
		)
	}
	cases = append(cases,
		hookCase{title: "both: Claude Code denies, so the Codex hook never runs", files: map[string]string{
			ccFile: hookGroup("PreToolUse", "bash", "echo 'claude-code says no' >&2; exit 2"),
			cxFile: hookGroup("PreToolUse", "bash", "echo 'codex says no' >&2; exit 2")}},
		hookCase{title: "both: Claude Code adds context, Codex blocks", files: map[string]string{
			ccFile: hookGroup("PostToolUse", "bash", postContext("from claude-code")),
			cxFile: `{"hooks":{"PostToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"echo '{\"decision\":\"block\",\"reason\":\"codex blocks\",\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"from codex\"}}'"}]}]}}`}},
	)
	failures := []hookCase{
		{title: "a timeout (0.2 s) on a hook that sleeps 30 s", files: map[string]string{ccFile: hookTimeout("PreToolUse", "sleep 30; exit 2", "0.2")}},
		{title: "timeout 0: the hook never starts", files: map[string]string{ccFile: hookTimeout("PreToolUse", "exit 2", "0")}},
		{title: "a crashing hook (killed by SIGSEGV)", files: map[string]string{cxFile: hookGroup("PreToolUse", "bash", "ulimit -c 0; echo 'about to crash' >&2; kill -SEGV $$")}},
		{title: "a hook that fails (exit 1)", files: map[string]string{ccFile: hookGroup("PreToolUse", "bash", "echo 'Traceback: KeyError' >&2; exit 1")}},
		{title: "a missing command (exit 127)", files: map[string]string{cxFile: hookGroup("PreToolUse", "bash", "no-such-guard-script")}},
		{title: "an invalid file (matcher \"[\") beside a valid Codex file", files: map[string]string{
			ccFile: hookGroup("PreToolUse", "[", "echo 'never runs' >&2; exit 2"),
			cxFile: hookGroup("PostToolUse", "bash", postContext("the codex bridge still runs"))}},
		{title: "an unsupported matcher (lookahead \"(?=bash)\")", files: map[string]string{cxFile: hookGroup("PreToolUse", "(?=bash)", "exit 2")}},
	}
	for _, c := range failures {
		cases = append(cases, c)
		c.title += "; strict"
		c.strict = true
		cases = append(cases, c)
	}
	return cases
}

// runHooks is the hooks sim: Claude Code and Codex hook configs around the
// real bash tool, composed by the stack as the acp-agent composes them; the
// hook commands and the user who answers approval prompts are constructed.
func runHooks(env *harness.Env) (map[string][]byte, error) {
	var b strings.Builder
	b.WriteString("hooks: Claude Code (hooks.json) and Codex (codex-hooks.json) hooks around the real bash tool, composed by the stack as the acp-agent does\n")
	b.WriteString("(every hook command is constructed for this simulation, and so is the user who answers approval prompts; one fresh session per case,\n")
	b.WriteString(" danger-full-access and approval ask; the model calls bash " + hookSimArgs + "; durationMs is normalised to 0)\n")
	for i, c := range hookCases() {
		out, err := runHookCase(env, c)
		if err != nil {
			return nil, fmt.Errorf("case %d (%s): %w", i+1, c.title, err)
		}
		fmt.Fprintf(&b, "\n%d. %s\n%s", i+1, c.title, out)
	}
	return map[string][]byte{"txt/hooks.txt": []byte(b.String())}, nil
}

func runHookCase(env *harness.Env, c hookCase) (string, error) {
	ws, err := env.TempDir()
	if err != nil {
		return "", err
	}
	logDir, err := env.TempDir()
	if err != nil {
		return "", err
	}
	norm := harness.NewNormalizer().Workspace(ws).Temp(logDir)
	var b strings.Builder
	for _, d := range hooks.Dialects {
		if body, ok := c.files[d.File]; ok {
			if err := os.WriteFile(filepath.Join(ws, d.File), []byte(body), 0o644); err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "   %-16s %s\n", d.File, body)
		}
	}
	log, err := session.Create(filepath.Join(logDir, "session.jsonl"), session.Header{ID: "sim-session", Cwd: ws})
	if err != nil {
		return "", err
	}
	defer log.Close()
	answer := c.answer
	if answer == "" {
		answer = pipeline.Cancelled
	}
	st, err := stack.New(stack.Config{
		Workspace: ws, Log: log, Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalAsk,
		Answer:   func(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) { return answer, nil },
		HooksDir: ws, HooksStrict: c.strict,
	})
	if err != nil {
		return "", err
	}
	defer st.Close()
	for _, w := range st.HookReports() {
		fmt.Fprintf(&b, "   reported         %s\n", norm.String(w))
	}
	before := len(st.Warnings())
	if _, err := log.Append("turn/start", map[string]any{"turn": 1}); err != nil {
		return "", err
	}
	res := st.Execute(context.Background(), "call_1", "bash", json.RawMessage(hookSimArgs))
	events, err := log.Events()
	if err != nil {
		return "", err
	}
	for _, e := range events[1:] {
		data := string(e.Data)
		if e.Type == hooks.EventResult {
			data = zeroDuration(e.Data)
		}
		fmt.Fprintf(&b, "   log              %s %s\n", e.Type, norm.String(data))
	}
	verdict := "bash ran"
	if res.Text() != "HELLO\n" {
		verdict = "bash did not run"
		if res.IsError && !strings.HasPrefix(res.Text(), "Error: ") {
			verdict = "bash ran; its result was blocked"
		}
	}
	fmt.Fprintf(&b, "   model sees       %s (isError %v; %s)\n", norm.String(quoteText(res.Text())), res.IsError, verdict)
	for _, m := range res.ContextMessages {
		fmt.Fprintf(&b, "   next step        user message from plugin %s: %s\n", m.Plugin, quoteText(strings.Join(m.Texts, " | ")))
	}
	for _, w := range st.Warnings()[before:] {
		fmt.Fprintf(&b, "   reported         %s\n", norm.String(w))
	}
	return b.String(), nil
}

// zeroDuration rewrites hook/result's durationMs (run noise) to 0.
func zeroDuration(data json.RawMessage) string {
	var r map[string]json.RawMessage
	if json.Unmarshal(data, &r) != nil {
		return string(data)
	}
	if _, ok := r["durationMs"]; !ok {
		return string(data)
	}
	return strings.Replace(string(data), `"durationMs":`+string(r["durationMs"]), `"durationMs":0`, 1)
}

// quoteText shows a model-facing text on one line.
func quoteText(s string) string { return jsjson.Quote(s) }
