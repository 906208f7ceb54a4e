package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/stack/subagents"
)

const stepDenial = `Error: workflow step "survey" is restricted to read-only tools (job_output, job_list, read): "%s" is not one of them, and nothing registered later can allow it`

// TestWorkflowReadOnlyStep is the documentation page's example: a
// workflow restricts one sub-task to read-only tools; although the session
// has write tools (and a workspace-write sandbox the step inherits, so the
// sandbox would let the write through), the guard in the step's scope denies
// the write, and nothing registered afterwards can undo it.
func TestWorkflowReadOnlyStep(t *testing.T) {
	user := &granting{}
	s, ws, log := newStack(t, sandbox.ReadOnly, stack.ApprovalAsk, user.answer)
	if _, err := policy.SetSandboxMode(log, sandbox.WorkspaceWrite); err != nil {
		t.Fatal(err)
	}
	// The session writes.
	if res := call(t, s.Execute, "p1", "write", map[string]any{"file_path": "plan.md", "content": "step 1: survey\n"}); res.IsError {
		t.Fatalf("the session's own write: %s", res.Text())
	}
	step := delegate(t, s, stack.Delegation{ID: "step-1", Label: "survey", Restriction: subagents.Restriction{ReadOnly: true}})
	if got := strings.Join(step.Tools(), ","); got != "job_output,job_list,read" {
		t.Errorf("the step sees %s, want only the read-only tools", got)
	}
	// Everything registered afterwards tries to let writes through.
	mustOK := func(_ func(), err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	forceAllow := func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		return pipeline.Allow(), nil
	}
	mustOK(s.In(nil).PrependPreExecute(forceAllow))
	mustOK(s.In(step.Agent().Scope()).PrependPreExecute(forceAllow))
	mustOK(s.In(nil).PrependExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
		return next(ctx)
	}))
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"write", map[string]any{"file_path": "plan.md", "content": "overwritten by the step"}},
		{"edit", map[string]any{"file_path": "plan.md", "old_string": "survey", "new_string": "rewrite"}},
		{"bash", map[string]any{"command": "echo overwritten > plan.md", "description": "write"}},
	} {
		res := call(t, step.Execute, "s-"+tc.tool, tc.tool, tc.args)
		if want := fmt.Sprintf(stepDenial, tc.tool); res.Text() != want {
			t.Errorf("step %s:\n got %q\nwant %q", tc.tool, res.Text(), want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "plan.md")); string(b) != "step 1: survey\n" {
		t.Errorf("plan.md = %q after the step", b)
	}
	if res := call(t, step.Execute, "s-read", "read", map[string]any{"file_path": "plan.md"}); res.IsError || !strings.Contains(res.Text(), "step 1: survey") {
		t.Errorf("the step's read: %q", res.Text())
	}
	if user.asked != 0 {
		t.Errorf("the user was asked %d times", user.asked)
	}
	if got := lines(t, step.Log(), 0)[3]; got != `subagent/descriptor {"version":2,"mode":"one-shot","provider":"spawn","label":"survey"}` {
		t.Errorf("descriptor %s", got)
	}
	// The session keeps its write tools during and after the step.
	if res := call(t, s.Execute, "p2", "edit", map[string]any{"file_path": "plan.md", "old_string": "survey", "new_string": "survey done"}); res.IsError {
		t.Errorf("the session's edit after the step: %s", res.Text())
	}
}

// Example_readOnlyStep: a workflow step restricted to read-only tools in a
// session that can write.
func Example_readOnlyStep() {
	dir, _ := os.MkdirTemp("", "dsh-example-")
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	log, _ := session.Create(filepath.Join(dir, "session.jsonl"), session.Header{ID: "s", Cwd: ws})
	defer log.Close()
	s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalNever})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	args := func(v map[string]any) json.RawMessage { b, _ := json.Marshal(v); return b }
	ctx := context.Background()

	fmt.Println(s.Execute(ctx, "c1", "write", args(map[string]any{"file_path": "notes.md", "content": "todo\n"})).IsError)

	step, err := s.Delegate(stack.Delegation{ID: "step", SessionID: "s-step", LogPath: filepath.Join(dir, "step.jsonl"), Label: "survey", Restriction: subagents.Restriction{ReadOnly: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer step.End()
	fmt.Println(step.Tools())
	fmt.Println(step.Execute(ctx, "c2", "write", args(map[string]any{"file_path": "notes.md", "content": "gone\n"})).Text())
	fmt.Println(step.Execute(ctx, "c3", "read", args(map[string]any{"file_path": "notes.md"})).IsError)
	// Output:
	// false
	// [job_output job_list read]
	// Error: workflow step "survey" is restricted to read-only tools (job_output, job_list, read): "write" is not one of them, and nothing registered later can allow it
	// false
}

// TestWorkflowRunsAgentsThroughTheStack: the workflow tool runs its body in
// run_code's Node runtime; each agent() is a one-shot spawn child of the
// caller driven by the agent loop; agent({readOnly: true}) is the
// read-only step (its write denied by the step's guard while its sibling,
// in the same workspace-write session, writes); the caller's log gets
// run-start, agent-start and agent-end for each agent, and run-end; the
// result renders the return value. A body that does not parse records no
// run. Planted bugs caught: the readOnly option dropped on its way to the
// delegation, events recorded for a parse failure, an agent-end missing
// for a child.
func TestWorkflowRunsAgentsThroughTheStack(t *testing.T) {
	brains := func(prompt string) brain {
		return func(ctx context.Context, c *stack.Child, turn int, msgs []stack.Message) (string, string) {
			r := call(t, c.Execute, "w", "write", map[string]any{"file_path": prompt + ".md", "content": prompt})
			if r.IsError {
				return "refused: " + r.Text(), "completed"
			}
			return "wrote " + prompt, "completed"
		}
	}
	s, ws, log, _, dir := delegating(t, sandbox.WorkspaceWrite, stack.DefaultSubagents(), brains)
	from := len(lines(t, log, 0))
	script := `phase("work");
const [a, b] = await parallel([() => agent("writer", {label: "w"}), () => agent("reader", {label: "r", readOnly: true})]);
return {a, b};`
	res := call(t, s.Execute, "wf1", "workflow", map[string]any{"script": script, "meta": map[string]any{"name": "pair", "description": "two agents"}})
	if res.IsError {
		t.Fatalf("workflow: %s", res.Text())
	}
	want := "workflow \"pair\" completed (2 agents).\nReturn value:\n{\n  \"a\": \"wrote writer\",\n  \"b\": \"refused: " +
		`Error: workflow step \"r\" is restricted to read-only tools (job_output, job_list, read): \"write\" is not one of them, and nothing registered later can allow it"` + "\n}"
	if res.Text() != want {
		t.Errorf("result\n got %q\nwant %q", res.Text(), want)
	}
	if _, err := os.Stat(filepath.Join(ws, "writer.md")); err != nil {
		t.Errorf("the writer's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "reader.md")); err == nil {
		t.Error("the read-only step wrote reader.md")
	}
	var kinds []string
	for _, l := range lines(t, log, from) {
		if typ, _, _ := strings.Cut(l, " "); strings.HasPrefix(typ, "tool-workflow/") {
			kinds = append(kinds, strings.TrimPrefix(typ, "tool-workflow/"))
		}
	}
	if got := strings.Join(kinds, ","); got != "run-start,agent-start,agent-start,agent-end,agent-end,run-end" && got != "run-start,agent-start,agent-end,agent-start,agent-end,run-end" {
		t.Errorf("the caller's workflow events: %s", got)
	}
	if n := len(childLogs(t, dir)); n != 2 {
		t.Errorf("%d child logs, want 2", n)
	}
	// A schema makes a structured child: one that answers in text and never
	// calls structured_output recorded nothing, so its agent() is null.
	schema := call(t, s.Execute, "wf3", "workflow", map[string]any{"script": `return await agent("x", {schema: {type: "object"}});`, "meta": map[string]any{"name": "typed", "description": "d"}})
	if want := "workflow \"typed\" completed (1 agent).\nReturn value:\nnull"; schema.Text() != want {
		t.Errorf("a schema:\n got %q\nwant %q", schema.Text(), want)
	}
	from = len(lines(t, log, 0))
	bad := call(t, s.Execute, "wf2", "workflow", map[string]any{"script": "return (", "meta": map[string]any{"name": "bad", "description": "d"}})
	if !bad.IsError || !strings.Contains(bad.Text(), "Error: ") {
		t.Errorf("a body that does not parse: %q", bad.Text())
	}
	for _, l := range lines(t, log, from) {
		if strings.HasPrefix(l, "tool-workflow/") {
			t.Errorf("a parse failure recorded %s", l)
		}
	}
}
