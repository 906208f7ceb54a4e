package stack_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/stack/subagents"
)

// granting is a constructed user who allows everything, counting the asks.
type granting struct{ asked int }

func (g *granting) answer(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	g.asked++
	return pipeline.AllowedOnce, nil
}

func delegate(t *testing.T, s *stack.Stack, d stack.Delegation) *stack.Child {
	t.Helper()
	if d.ID == "" {
		d.ID = "child"
	}
	if d.SessionID == "" {
		d.SessionID = "0b7c2a52-5a8e-4d8e-9a55-00000000c41d"
	}
	if d.LogPath == "" {
		d.LogPath = filepath.Join(t.TempDir(), "child.jsonl")
	}
	d.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	c, err := s.Delegate(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.End() })
	if err := c.BeginTurn(); err != nil {
		t.Fatal(err)
	}
	return c
}

func call(t *testing.T, exec func(context.Context, string, string, json.RawMessage) pipeline.Result, id, tool string, args map[string]any) pipeline.Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	return exec(context.Background(), id, tool, raw)
}

// lines renders the type and data of every event of log from seq from.
func lines(t *testing.T, log *session.Log, from int) []string {
	t.Helper()
	events, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events[from:] {
		out = append(out, e.Type+" "+string(e.Data))
	}
	return out
}

// TestDelegatedChildInherits: as upstream's inheritance tests pin it. The
// parent's explicit read-only override and the never pin are the child log's
// first events; the header says where the child comes from; the child sees
// the three sentences; its write is denied by the read-only fence with the
// VERBATIM markers; its escalation is rejected without asking anyone (the
// granting answerer is never consulted), audited in the child's log only;
// the parent's log is untouched.
func TestDelegatedChildInherits(t *testing.T) {
	user := &granting{}
	s, ws, log := newStack(t, sandbox.WorkspaceWrite, stack.ApprovalAsk, user.answer)
	if _, err := policy.SetSandboxMode(log, sandbox.ReadOnly); err != nil {
		t.Fatal(err)
	}
	before := lines(t, log, 0)
	c := delegate(t, s, stack.Delegation{Label: "review"})

	raw, err := os.ReadFile(c.Log().Path())
	if err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(string(raw), "\n", 2)[0]
	if want := `{"type":"session","version":0,"id":"0b7c2a52-5a8e-4d8e-9a55-00000000c41d","createdAt":1700000000000,"cwd":"` + ws + `","parentSession":"0b7c2a52-5a8e-4d8e-9a55-000000000001","origin":"subagent","delegationDepth":1}`; head != want {
		t.Errorf("child header\n got %s\nwant %s", head, want)
	}
	want := []string{
		`sandbox/mode {"mode":"read-only","source":"delegation"}`,
		`approval/policy {"policy":"never","source":"delegation"}`,
		`turn/start {"turn":1}`,
		`subagent/descriptor {"version":2,"mode":"one-shot","provider":"spawn","label":"review"}`,
	}
	if got := lines(t, c.Log(), 0); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("child log\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rc, err := c.RuntimeContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n" +
		"Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot modify files in the standing mode. Do not refuse a required modification from this policy alone: try an available tool normally and follow any denial and escalation guidance it returns.\n\n" +
		"Approval prompts are disabled in this session: actions that require approval are rejected automatically — do not request sandbox escalation (do not set `sandbox_permissions`).\n\n" +
		"You are a delegated subagent: your permission scope was fixed when you were started and cannot be widened from inside this session — operations that require approval are rejected automatically. When the task needs access beyond that scope, do not retry the denied operation; state the limitation in your reply so the delegating agent can handle it."
	if rc.Text != wantText {
		t.Errorf("child runtime context\n got %q\nwant %q", rc.Text, wantText)
	}
	if prc, _ := s.RuntimeContext(context.Background()); strings.Contains(prc.Text, "delegated subagent") {
		t.Error("the parent's runtime context carries the delegation sentence")
	}

	denied := call(t, c.Execute, "w1", "write", map[string]any{"file_path": "notes.txt", "content": "x"})
	if wantDenied := "Error: [sandbox: file access denied under read-only mode]\n[sandbox: escalation available — retry this exact operation once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"; denied.Text() != wantDenied {
		t.Errorf("child write\n got %q\nwant %q", denied.Text(), wantDenied)
	}
	esc := call(t, c.Execute, "w2", "write", map[string]any{"file_path": "notes.txt", "content": "x", "sandbox_permissions": "workspace-write", "justification": "the task edits notes"})
	if esc.Text() != `Error: the user rejected escalating this operation to "workspace-write"` {
		t.Errorf("child escalation: %q", esc.Text())
	}
	sh := call(t, c.Execute, "b1", "bash", map[string]any{"command": "echo x > notes.txt", "description": "write"})
	if !strings.Contains(sh.Text(), sandbox.DenialMarker(sandbox.ReadOnly)) {
		t.Errorf("child bash write under the inherited read-only mode: %q", sh.Text())
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err == nil {
		t.Error("the child wrote notes.txt")
	}
	if user.asked != 0 {
		t.Errorf("the granting answerer was asked %d times", user.asked)
	}
	audit := lines(t, c.Log(), 4)
	if len(audit) != 2 || !strings.HasPrefix(audit[0], "approval/asked ") || !strings.HasSuffix(audit[1], `"outcome":"rejected"}`) {
		t.Errorf("child audit %v", audit)
	}
	if after := lines(t, log, 0); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("the parent's log changed:\n%s", strings.Join(after[len(before):], "\n"))
	}
}

// TestDelegationCapture: no override in the parent → no sandbox/mode event in
// the child (it follows the deployment default) and the pin is still there
// (as upstream's inheritance tests); a parent switch after the capture does
// not reach the child (as upstream's continuation tests).
func TestDelegationCapture(t *testing.T) {
	s, ws, log := newStack(t, sandbox.WorkspaceWrite, stack.ApprovalAsk, (&granting{}).answer)
	c := delegate(t, s, stack.Delegation{})
	if got := lines(t, c.Log(), 0)[0]; got != `approval/policy {"policy":"never","source":"delegation"}` {
		t.Errorf("first child event %s", got)
	}
	if _, err := policy.SetSandboxMode(log, sandbox.ReadOnly); err != nil {
		t.Fatal(err)
	}
	res := call(t, c.Execute, "w1", "write", map[string]any{"file_path": "child.txt", "content": "ok"})
	if res.IsError {
		t.Fatalf("child write under the deployment default workspace-write: %s", res.Text())
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "child.txt")); string(b) != "ok" {
		t.Errorf("child.txt = %q", b)
	}
	if parent := call(t, s.Execute, "w2", "write", map[string]any{"file_path": "parent.txt", "content": "no"}); !parent.IsError {
		t.Error("the parent's own read-only switch did not apply to the parent")
	}
}

// TestDelegationScopes: the parent agent's own registrations do not reach
// its child (the child is a sibling under the preset's standing scope); the
// standing scope's reach both; the child's reach only the child; ending the
// child removes them and refuses its calls; the parent goes on.
func TestDelegationScopes(t *testing.T) {
	s, _, _ := newStack(t, sandbox.WorkspaceWrite, stack.ApprovalAsk, (&granting{}).answer)
	deny := func(reason string) pipeline.Guard {
		return func(ctx context.Context, call *pipeline.Call) (string, bool) { return reason, call.Name() == "read" }
	}
	mustOK := func(remove func(), err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	mustOK(s.In(s.Agent().Scope()).AddGuard(deny("the parent's own guard")))
	c := delegate(t, s, stack.Delegation{})
	mustOK(s.In(c.Agent().Scope()).AddGuard(deny("the child's guard")))
	read := map[string]any{"file_path": "missing.txt"}
	if got := call(t, c.Execute, "r1", "read", read).Text(); got != "Error: the child's guard" {
		t.Errorf("child read: %q (the parent's agent guard must not reach the child)", got)
	}
	if got := call(t, s.Execute, "r2", "read", read).Text(); got != "Error: the parent's own guard" {
		t.Errorf("parent read: %q", got)
	}
	mustOK(s.In(s.Standing()).AddGuard(deny("the preset's guard")))
	if got := call(t, c.Execute, "r3", "read", read).Text(); got != "Error: the preset's guard" {
		t.Errorf("child read under the preset's guard: %q (farthest scope first)", got)
	}
	if err := c.End(); err != nil {
		t.Fatal(err)
	}
	if got := call(t, c.Execute, "r4", "read", read).Text(); got != `Error: agent "child" cannot call tools: scope of agent "child" has ended and its registrations were removed; the call was not run` {
		t.Errorf("call after the child ended: %q", got)
	}
	if got := call(t, s.Execute, "r5", "read", read).Text(); got != "Error: the preset's guard" {
		t.Errorf("parent after the child ended: %q", got)
	}
}

func TestDelegationFailsClosed(t *testing.T) {
	zero, neg := 0, -1
	tests := []struct {
		name string
		d    stack.Delegation
		want string
	}{
		{"depth over the cap", stack.Delegation{Restriction: subagents.Restriction{MaxDepth: &zero}}, "subagent depth 1 exceeds maxDepth 0"},
		{"negative cap", stack.Delegation{Restriction: subagents.Restriction{MaxDepth: &neg}}, "subagent maxDepth must be a non-negative safe integer"},
		{"unknown filter name", stack.Delegation{Restriction: subagents.Restriction{ToolFilter: &pipeline.Filter{Allow: []string{"read", "grep"}}}}, `tools.restrict() names unknown global tool "grep"; known global tools: bash, edit, job_kill, job_list, job_output, read, write`},
		{"empty filter", stack.Delegation{Restriction: subagents.Restriction{ToolFilter: &pipeline.Filter{}}}, "tools.restrict({}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)"},
		{"relative log path", stack.Delegation{LogPath: "child.jsonl"}, `stack: the child log path "child.jsonl" must be absolute`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := newStack(t, sandbox.WorkspaceWrite, stack.ApprovalAsk, (&granting{}).answer)
			dir := t.TempDir()
			tc.d.ID, tc.d.SessionID = "child", "c1"
			if tc.d.LogPath == "" {
				tc.d.LogPath = filepath.Join(dir, "child.jsonl")
			}
			c, err := s.Delegate(tc.d)
			if c != nil || err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Delegate = %v, %v; want %q", c, err, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a refused delegation left %d files behind", len(entries))
			}
		})
	}
}

// TestToolFilter: upstream's toolFilter hides the schema and the call fails
// at dispatch with unknown tool; a one-shot descriptor does not carry the
// filter (upstream refuses any key but version, mode, provider and label
// there; a continuable child's persists it for a cold resume).
func TestToolFilter(t *testing.T) {
	s, _, _ := newStack(t, sandbox.WorkspaceWrite, stack.ApprovalAsk, (&granting{}).answer)
	c := delegate(t, s, stack.Delegation{Restriction: subagents.Restriction{ToolFilter: &pipeline.Filter{Deny: []string{"write", "edit"}}}})
	if got := strings.Join(c.Tools(), ","); got != "bash,job_output,job_kill,job_list,read" {
		t.Errorf("child tools %s", got)
	}
	if got := call(t, c.Execute, "w1", "write", map[string]any{"file_path": "x", "content": "x"}).Text(); got != `Error: unknown tool "write"` {
		t.Errorf("hidden write: %q", got)
	}
	if got := lines(t, c.Log(), 2)[0]; got != `subagent/descriptor {"version":2,"mode":"one-shot","provider":"spawn"}` {
		t.Errorf("descriptor %s", got)
	}
}

// TestUnguardedChildInheritsNothing: in a composition without the
// sandbox-policy and approval plugins (Without.Policy, headless's default
// cordis.yml) a delegated child captures no mode and is pinned to no
// policy, and its runtime context holds only the delegation sentence, as
// upstream's system prompt renders the contributions it has.
func TestUnguardedChildInheritsNothing(t *testing.T) {
	s, _, _ := newStackConfig(t, stack.Config{Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever, Without: stack.Without{Policy: true}})
	c := delegate(t, s, stack.Delegation{Label: "review"})
	want := []string{
		`turn/start {"turn":1}`,
		`subagent/descriptor {"version":2,"mode":"one-shot","provider":"spawn","label":"review"}`,
	}
	wantLog(t, c, want)
	rc, err := c.RuntimeContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n" +
		"You are a delegated subagent: your permission scope was fixed when you were started and cannot be widened from inside this session — operations that require approval are rejected automatically. When the task needs access beyond that scope, do not retry the denied operation; state the limitation in your reply so the delegating agent can handle it."
	if rc.Text != wantText {
		t.Errorf("child runtime context\n got %q\nwant %q", rc.Text, wantText)
	}
}

// TestWithoutApproval: a composition with the sandbox policy and no
// approval plugin (Without.Approval, upstream's subagent-inheritance
// overlay) states the sandbox alone in its runtime context, refuses an
// escalation as upstream's sandbox does when no approval service is
// composed, and pins its delegated child to no approval policy while the
// child inherits the parent's own sandbox/mode.
func TestWithoutApproval(t *testing.T) {
	s, _, log := newStackConfig(t, stack.Config{Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalNever, Without: stack.Without{Approval: true}})
	if _, err := policy.SetSandboxMode(log, sandbox.ReadOnly); err != nil {
		t.Fatal(err)
	}
	rc, err := s.RuntimeContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n" +
		"Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot modify files in the standing mode. Do not refuse a required modification from this policy alone: try an available tool normally and follow any denial and escalation guidance it returns."
	if rc.Text != wantText {
		t.Errorf("runtime context\n got %q\nwant %q", rc.Text, wantText)
	}
	esc := call(t, s.Execute, "w1", "write", map[string]any{"file_path": "notes.txt", "content": "x", "sandbox_permissions": "workspace-write", "justification": "the task edits notes"})
	if want := `Error: sandbox escalation to "workspace-write" requires approval, but no approval service is composed`; esc.Text() != want {
		t.Errorf("escalation\n got %q\nwant %q", esc.Text(), want)
	}
	c := delegate(t, s, stack.Delegation{Label: "review"})
	want := []string{
		`sandbox/mode {"mode":"read-only","source":"delegation"}`,
		`turn/start {"turn":1}`,
		`subagent/descriptor {"version":2,"mode":"one-shot","provider":"spawn","label":"review"}`,
	}
	wantLog(t, c, want)
	denied := call(t, c.Execute, "w2", "write", map[string]any{"file_path": "notes.txt", "content": "x"})
	if !strings.Contains(denied.Text(), "[sandbox: file access denied under read-only mode]") {
		t.Errorf("child write under the inherited read-only mode: %q", denied.Text())
	}
}

// wantLog fails unless the child's log holds lines want.
func wantLog(t *testing.T, c *stack.Child, want []string) {
	t.Helper()
	if got := lines(t, c.Log(), 0); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("child log\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
