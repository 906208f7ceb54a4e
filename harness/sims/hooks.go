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
	cases := hookCases()
	for i, c := range cases {
		out, err := runHookCase(env, c, (*hookRig).callBash)
		if err != nil {
			return nil, fmt.Errorf("case %d (%s): %w", i+1, c.title, err)
		}
		fmt.Fprintf(&b, "\n%d. %s\n%s", i+1, c.title, out)
	}
	b.WriteString("\nUserPromptSubmit and Stop hooks around a turn: the prompt " + jsjson.Quote(turnSimPrompt) + " is submitted (its step claims it), then the turn would stop\n")
	for i, c := range turnHookCases() {
		out, err := runHookCase(env, c, (*hookRig).runTurn)
		if err != nil {
			return nil, fmt.Errorf("case %d (%s): %w", len(cases)+i+1, c.title, err)
		}
		fmt.Fprintf(&b, "\n%d. %s\n%s", len(cases)+i+1, c.title, out)
	}
	return map[string][]byte{"txt/hooks.txt": []byte(b.String())}, nil
}

// turnSimPrompt is the prompt of every turn case.
const turnSimPrompt = "Delete the build directory."

// turnHookCases are the UserPromptSubmit and Stop decisions of both
// dialects, and the strict switch on a hook that cannot run.
func turnHookCases() []hookCase {
	group := func(point string, commands ...string) string {
		var hs []string
		for _, c := range commands {
			hs = append(hs, `{"type":"command","command":`+jsjson.Quote(c)+`}`)
		}
		return `{"hooks":{"` + point + `":[{"hooks":[` + strings.Join(hs, ",") + `]}]}}`
	}
	ups := func(commands ...string) string { return group("UserPromptSubmit", commands...) }
	stop := func(commands ...string) string { return group("Stop", commands...) }
	promptContext := `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"The build directory is generated."}}'`
	return []hookCase{
		{title: "claude-code UserPromptSubmit: exit 2 with a reason", files: map[string]string{ccFile: ups("echo 'prompt refused by policy' >&2; exit 2")}},
		{title: "codex UserPromptSubmit: decision block", files: map[string]string{cxFile: ups(`echo '{"decision":"block","reason":"no deletions"}'`)}},
		{title: "claude-code UserPromptSubmit: additionalContext", files: map[string]string{ccFile: ups(promptContext)}},
		{title: "codex UserPromptSubmit: plain stdout is context", files: map[string]string{cxFile: ups("echo 'Remember: the build directory is generated.'")}},
		{title: "claude-code UserPromptSubmit: plain stdout is not context", files: map[string]string{ccFile: ups("echo 'Remember: the build directory is generated.'")}},
		{title: "both: contexts of both dialects", files: map[string]string{ccFile: ups(promptContext), cxFile: ups("echo 'from codex'")}},
		{title: "both: Claude Code blocks, so the Codex hook never runs", files: map[string]string{ccFile: ups("exit 2"), cxFile: ups("echo 'from codex'")}},
		{title: "claude-code Stop: exit 2 with a reason", files: map[string]string{ccFile: stop("echo 'Also run the tests, then stop.' >&2; exit 2")}},
		{title: "codex Stop: exit 2, nothing on stderr", files: map[string]string{cxFile: stop("exit 2")}},
		{title: "claude-code Stop: exit 0", files: map[string]string{ccFile: stop("exit 0")}},
		{title: "a UserPromptSubmit hook that cannot run (exit 127)", files: map[string]string{ccFile: ups("no-such-prompt-guard")}},
		{title: "a UserPromptSubmit hook that cannot run (exit 127); strict", strict: true, files: map[string]string{ccFile: ups("no-such-prompt-guard")}},
		{title: "a Stop hook that cannot run (exit 127); strict", strict: true, files: map[string]string{cxFile: stop("no-such-stop-guard")}},
	}
}

// runHookCase composes the case's session, runs act on it and shows the
// files and load reports, the events act logged, then the lines act returns.
func runHookCase(env *harness.Env, c hookCase, act func(*hookRig) (string, error)) (string, error) {
	r, err := newHookRig(env, c)
	if err != nil {
		return "", err
	}
	defer r.close()
	after, err := act(r)
	if err != nil {
		return "", err
	}
	logLines, err := r.logLines()
	if err != nil {
		return "", err
	}
	return r.header + logLines + after, nil
}

// runTurn submits the prompt to the bridges' UserPromptSubmit hooks as the
// agent's pre-step does (Claude Code first; a block ends the turn there),
// then, unless blocked, runs their Stop hooks as the turn would stop, and
// says what the turn does.
func (r *hookRig) runTurn() (string, error) {
	var turn []string
	var contexts []string
	blocked := false
	for _, br := range r.st.HookBridges() {
		d, err := br.PromptSubmit(context.Background(), r.st.Agent(), turnSimPrompt)
		if err != nil {
			return "", err
		}
		if d.Reject {
			blocked = true
			break
		}
		if d.Context != nil {
			// each bridge appends its message after the inner ones'
			contexts = append([]string{fmt.Sprintf("user message from plugin %s: %s", d.Context.Plugin, quoteText(strings.Join(d.Context.Texts, " | ")))}, contexts...)
		}
	}
	switch {
	case blocked:
		turn = append(turn, "turn/end blocked before its step: no model call; the client's prompt answers end_turn")
	default:
		for _, m := range contexts {
			turn = append(turn, "the step enters, after the runtime context, a "+m)
		}
		for _, br := range r.st.HookBridges() {
			steer, err := br.Stop(context.Background(), r.st.Agent())
			if err != nil {
				return "", err
			}
			if steer != nil {
				turn = append(turn, fmt.Sprintf("the turn goes on: the next step enters a steering user message from plugin %s: %s", steer.Plugin, quoteText(steer.Texts[0])))
			}
		}
		if len(turn) == 0 || !strings.HasPrefix(turn[len(turn)-1], "the turn goes on") {
			turn = append(turn, "the turn ends")
		}
	}
	var b strings.Builder
	for _, t := range turn {
		fmt.Fprintf(&b, "   turn             %s\n", t)
	}
	return b.String(), nil
}

// callBash has the model call bash once and says what the model sees, the
// hooks' messages for the next step and the warnings reported.
func (r *hookRig) callBash() (string, error) {
	var b strings.Builder
	before := len(r.st.Warnings())
	res := r.st.Execute(context.Background(), "call_1", "bash", json.RawMessage(hookSimArgs))
	verdict := "bash ran"
	if res.Text() != "HELLO\n" {
		verdict = "bash did not run"
		if res.IsError && !strings.HasPrefix(res.Text(), "Error: ") {
			verdict = "bash ran; its result was blocked"
		}
	}
	fmt.Fprintf(&b, "   model sees       %s (isError %v; %s)\n", r.norm.String(quoteText(res.Text())), res.IsError, verdict)
	for _, m := range res.ContextMessages {
		fmt.Fprintf(&b, "   next step        user message from plugin %s: %s\n", m.Plugin, quoteText(strings.Join(m.Texts, " | ")))
	}
	for _, w := range r.st.Warnings()[before:] {
		fmt.Fprintf(&b, "   reported         %s\n", r.norm.String(w))
	}
	return b.String(), nil
}

// hookRig is one case's session: the config files written into a fresh
// workspace, the stack composed on it, a turn started.
type hookRig struct {
	st     *stack.Stack
	log    *session.Log
	norm   *harness.Normalizer
	header string // the files and load reports, as the case shows them
}

func newHookRig(env *harness.Env, c hookCase) (*hookRig, error) {
	dirs, err := tempDirs(env, 2)
	if err != nil {
		return nil, err
	}
	ws, logDir := dirs[0], dirs[1]
	r := &hookRig{norm: harness.NewNormalizer().Workspace(ws).Temp(logDir)}
	var b strings.Builder
	for _, d := range hooks.Dialects {
		if body, ok := c.files[d.File]; ok {
			if err := os.WriteFile(filepath.Join(ws, d.File), []byte(body), 0o644); err != nil {
				return nil, err
			}
			fmt.Fprintf(&b, "   %-16s %s\n", d.File, body)
		}
	}
	if r.log, err = session.Create(filepath.Join(logDir, "session.jsonl"), session.Header{ID: "sim-session", Cwd: ws}); err != nil {
		return nil, err
	}
	answer := c.answer
	if answer == "" {
		answer = pipeline.Cancelled
	}
	r.st, err = stack.New(stack.Config{
		Workspace: ws, Log: r.log, Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalAsk,
		Answer: func(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) { return answer, nil },
		Hooks:  stack.HooksConfig{Dir: ws, Strict: c.strict},
	})
	if err != nil {
		r.log.Close()
		return nil, err
	}
	for _, w := range r.st.HookReports() {
		fmt.Fprintf(&b, "   reported         %s\n", r.norm.String(w))
	}
	r.header = b.String()
	if _, err := r.log.Append(session.KindTurnStart, session.TurnStart{Turn: 1}); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *hookRig) close() {
	r.st.Close()
	r.log.Close()
}

// logLines shows the events after turn/start (durationMs set to 0).
func (r *hookRig) logLines() (string, error) {
	events, err := r.log.Events()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range events[1:] {
		data := string(e.Data)
		if e.Type == session.KindHookResult {
			data = zeroDuration(e.Data)
		}
		fmt.Fprintf(&b, "   log              %s %s\n", e.Type, r.norm.String(data))
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
