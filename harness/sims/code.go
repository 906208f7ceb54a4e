package sims

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/code"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// codeStep is one run_code call the constructed model makes.
type codeStep struct {
	title, description, program string
}

// codeComputeMs is the sim's busy-time budget (upstream's default is 60 s).
const codeComputeMs = 800

// envGuard is the sim's constructed guard: no write to a .env file.
func envGuard(ctx context.Context, call *pipeline.Call) (string, bool) {
	var a struct {
		FilePath string `json:"file_path"`
	}
	if call.Name() != "write" || call.DecodeArgs(&a) != nil || filepath.Base(a.FilePath) != ".env" {
		return "", false
	}
	return "writing " + a.FilePath + " is refused: .env files hold secrets (constructed guard)", true
}

func codeSteps(outside string) []codeStep {
	return []codeStep{
		{"a program calling bash and read", "Write notes and read them back", `await tools.bash({command: "printf 'alpha\\nbeta\\n' > notes.txt", description: "Write two lines"});
const r = await tools.read({file_path: "notes.txt"});
console.log(r.totalLines + " lines");
return r.lines.map(l => l.text);`},
		{"a nested call denied by a guard", "Store the API key", `try {
  await tools.write({file_path: ".env", content: "API_KEY=x\n"});
} catch (e) {
  if (!(e instanceof ToolCallError)) throw e;
  console.log(e.name + " from " + e.toolName + ": " + e.message);
}
return "kept going";`},
		{"an escalation asked from inside a program", "Copy notes outside the workspace", `const cmd = "cp notes.txt ` + outside + `/notes.txt";
const first = await tools.bash({command: cmd, description: "Copy notes out"});
console.log("denied: " + first.sandbox?.denied);
const again = await tools.bash({command: cmd, description: "Copy notes out",
  sandbox_permissions: "danger-full-access", justification: "The user asked for a copy outside the workspace."});
return {exitCode: again.exitCode, sandbox: again.sandbox ?? null};`},
		{"a syntax error", "Use an enum", `enum Color { Red, Green }
return Color.Green;`},
		{"a time-out", "Spin forever", `const r = await tools.bash({command: "echo before the loop", description: "Say something"});
console.log(r.stdout.text.trim());
while (true) {}`},
	}
}

// The code-mode sim: run_code in the composed stack (code mode,
// workspace-write, Landlock), five programs.
func runCode(env *harness.Env) (map[string][]byte, error) {
	_, runner, err := buildRunner(env)
	if err != nil {
		return nil, err
	}
	parent, release, err := scratchDir("code")
	if err != nil {
		return nil, err
	}
	defer release()
	ws, outside := filepath.Join(parent, "ws"), filepath.Join(parent, "outside")
	if err := mkdirs(ws, outside); err != nil {
		return nil, err
	}
	logDir, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	norm := harness.NewNormalizer().Workspace(ws).Path(outside, "<out>").Temp(logDir)
	log, err := session.Create(filepath.Join(logDir, "session.jsonl"), session.Header{ID: "code-mode-agent", Cwd: ws})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	var prompts []string
	st, err := stack.New(stack.Config{
		Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalAsk,
		Answer: func(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
			prompts = append(prompts, req.CallID)
			return pipeline.AllowedOnce, nil
		},
		SandboxConfig: stack.SandboxConfig{
			SandboxChain: []string{sandbox.BackendLandlock},
			LauncherPath: runner,
		},
		ToolOptions: stack.ToolOptions{
			ToolsMode:   stack.ToolsCode,
			CodeRuntime: noderuntime.Config{ComputeMs: codeComputeMs},
		},
	})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if _, err := st.In(nil).AddGuard(envGuard); err != nil {
		return nil, err
	}
	if _, err := log.Append(session.KindTurnStart, session.TurnStart{Turn: 1}); err != nil {
		return nil, err
	}

	var b bytes.Buffer
	b.WriteString("code mode: run_code programs in a fresh Node child confined like bash; every tools.x() goes through the whole pipeline\n")
	fmt.Fprintf(&b, "real: the stack in code mode (tools mode %q), Node and our runtime confined by Landlock under workspace-write in <ws>, bash, read, write, approval, the session log\n", stack.ToolsCode)
	b.WriteString("constructed: the model writing the programs, a guard refusing writes to .env files, the user allowing each prompt once\n")
	var wire []string
	for _, t := range st.WireTools() {
		wire = append(wire, t.Name)
	}
	fmt.Fprintf(&b, "the model's tools: %s; busy-time budget %dms (upstream's default 60000)\n", strings.Join(wire, ", "), codeComputeMs)
	seen := 0
	for i, s := range codeSteps(outside) {
		env.Logf("code: %s", s.title)
		if seen, err = runCodeStep(&b, st, seen, i, s); err != nil {
			return nil, err
		}
	}
	if len(prompts) != 1 || prompts[0] != "call_3:code:2" {
		return nil, fmt.Errorf("code sim: the user was asked for %v, want the escalated nested call call_3:code:2", prompts)
	}
	return map[string][]byte{"txt/code-mode.txt": norm.Bytes(b.Bytes())}, nil
}

// runCodeStep runs step i, a program the model sends in a run_code call,
// and writes it with the events logged since seen and the result; it
// returns how many events the log now holds.
func runCodeStep(b *bytes.Buffer, st *stack.Stack, seen, i int, s codeStep) (int, error) {
	callID := fmt.Sprintf("call_%d", i+1)
	args, _ := json.Marshal(map[string]string{"code": s.program, "description": s.description})
	res := st.Execute(context.Background(), callID, code.Name, args)
	fmt.Fprintf(b, "\n%d. %s\nprogram (%s):\n%s", i+1, s.title, callID, indent(s.program))
	evs, err := st.Agent().Session.Events()
	if err != nil {
		return seen, err
	}
	var lines []string
	for _, e := range evs[seen:] {
		if l := codeEventLine(e); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		lines = []string{"(none: no nested call was made)"}
	}
	b.WriteString("events:\n" + indent(strings.Join(lines, "\n")))
	fmt.Fprintf(b, "result (isError %v", res.IsError)
	if res.Error != nil && res.Error.Info != nil {
		fmt.Fprintf(b, ", %s/%s", res.Error.Info.Name, res.Error.Info.Code)
	}
	b.WriteString("):\n" + indent(stackFrames(res.Text())))
	return len(evs), nil
}

// mkdirs makes each directory (its parent must exist).
func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// codeEventLine renders the nested-call and approval events of a run.
func codeEventLine(e session.Event) string {
	var d map[string]any
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	s := func(k string) string { v, _ := d[k].(string); return v }
	switch e.Type {
	case session.KindCodeDispatchStart:
		var raw struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(e.Data, &raw)
		var args bytes.Buffer
		_ = json.Compact(&args, raw.Arguments)
		// the log escapes <, > and & as JSON allows; shown as typed
		shown := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(args.String())
		return fmt.Sprintf("%-25s %s %s %s", e.Type, s("subCallId"), s("name"), shown)
	case session.KindCodeDispatch:
		verdict := "ok"
		if b, _ := d["isError"].(bool); b {
			verdict = "isError"
		}
		var text strings.Builder
		blocks, _ := d["content"].([]any)
		for _, c := range blocks {
			m, _ := c.(map[string]any)
			t, _ := m["text"].(string)
			text.WriteString(t)
		}
		return fmt.Sprintf("%-25s %s %s %q", e.Type, s("subCallId"), verdict, text.String())
	case session.KindApprovalAsked:
		return fmt.Sprintf("%-25s %s %s", e.Type, s("callId"), s("toolName"))
	case session.KindApprovalDecided:
		return fmt.Sprintf("%-25s %s", e.Type, s("outcome"))
	}
	return ""
}

// stackFrames replaces the frames of a V8 stack trace, which name this
// machine's runtime files and line numbers, by one placeholder line.
func stackFrames(s string) string {
	var out []string
	framed := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "    at ") {
			if !framed {
				out = append(out, "    at <stack frames>")
			}
			framed = true
			continue
		}
		framed = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("  | " + l + "\n")
	}
	return b.String()
}
