package sims

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/subagent"
)

// childCall is one scripted call of the child's model.
type childCall struct {
	id, tool string
	args     map[string]any
}

// childScript is the child's constructed model: its calls, then its answer.
var childScript = []childCall{
	{"c1", "bash", map[string]any{"command": "echo 'review: ok' >> notes.md", "description": "append the review"}},
	{"c2", "write", map[string]any{"file_path": "review.md", "content": "review: ok\n"}},
	{"c3", "bash", map[string]any{"command": "echo 'review: ok' >> notes.md", "description": "append the review",
		"sandbox_permissions": "workspace-write", "justification": "the task appends a review line"}},
}

const childAnswer = "I could not write the review: this session's sandbox is read-only (bash and write were denied, and the escalation was rejected). The review line is: review: ok"

// simLoops is the constructed agent loop of the sim (stack.Loops): a
// child's one turn is turn/start, its pre-step (the one-shot descriptor),
// its runtime context, the scripted calls through the whole pipeline, then
// its answer as assistant/message and turn/end.
type simLoops struct {
	r       *scopeRig
	results []string // what each scripted call returned, rendered
	tools   []string // the tools the child saw
	context string   // the child's runtime context
}

func (l *simLoops) Start(c *stack.Child) (stack.Loop, error) {
	return &simLoop{owner: l, c: c, done: make(chan struct{})}, nil
}

type simLoop struct {
	owner *simLoops
	c     *stack.Child
	once  sync.Once
	done  chan struct{}
}

func (l *simLoop) Followup(m stack.Message) error {
	l.once.Do(func() { go l.turn() })
	return nil
}

func (l *simLoop) turn() {
	defer close(l.done)
	ctx := context.Background()
	log := l.c.Log()
	log.Append("turn/start", map[string]int{"turn": 1})
	l.c.PreStep()
	l.c.SyncContext(ctx)
	rc, _ := l.c.RuntimeContext(ctx)
	l.owner.context = rc.Text
	l.owner.tools = l.c.Tools()
	for _, call := range childScript {
		res := runCall(l.c.Execute, call.id, call.tool, call.args)
		l.owner.results = append(l.owner.results, fmt.Sprintf("%s %s → %q", call.tool, compact(call.args), res.Text()))
	}
	log.Append("assistant/message", map[string]any{"message": map[string]any{"role": "assistant",
		"content": []any{map[string]string{"type": "text", "text": childAnswer}}}})
	log.Append("turn/end", map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}})
}

func (l *simLoop) Steer(m stack.Message) error { return l.Followup(m) }
func (l *simLoop) Running() bool {
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}
func (l *simLoop) Idle() bool { return !l.Running() }
func (l *simLoop) WhenIdle(ctx context.Context) error {
	select {
	case <-l.done:
	case <-ctx.Done():
	}
	return ctx.Err()
}
func (l *simLoop) Cancel(bool)  {}
func (l *simLoop) Close() error { return nil }

// The subagents sim: a parent in workspace-write delegates through a tool
// whose children run read-only; the child's writes are refused by the real
// sandbox and its answer returns to the parent.
func runSubagents(env *harness.Env) (map[string][]byte, error) {
	r, err := newScopeRig(env)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.norm.JSONTimes("createdAt")
	r.printf("subagents: a parent in workspace-write delegates to a read-only child; the real stack (pipeline, approval service, file tools, bash under Landlock) with delegation composed;\n")
	r.printf("the parent's and the child's model calls are scripted, the agent loop that drives the child is constructed (one turn: its calls, then its answer), and the user is constructed (allows every question it is asked)\n")
	if err := r.delegateReadOnly(); err != nil {
		return nil, err
	}
	if err := r.widening(); err != nil {
		return nil, err
	}
	return map[string][]byte{"txt/subagents.txt": r.b.Bytes()}, nil
}

// reviewTool is the delegation tool of the sim: a one-shot spawn tool
// whose children run read-only.
func reviewTool(mode sandbox.Mode) subagent.Instance {
	one := 1
	return subagent.Instance{Name: "subagent", Provider: stack.ProviderSpawn, Background: subagent.OneShot, MaxDepth: &one, Sandbox: mode}
}

// subagentStack composes the sim's stack: workspace-write, delegation
// through tool, children logged under the rig's directory as session-child.
func (r *scopeRig) subagentStack(id string, tool subagent.Instance, loops *simLoops) (*stack.Stack, string, *session.Log, string, error) {
	dir, err := r.env.TempDir()
	if err != nil {
		return nil, "", nil, "", err
	}
	r.norm.Path(dir, "<children>")
	s, ws, log, err := r.stack(id, sandbox.WorkspaceWrite, func(cfg *stack.Config) {
		cfg.Subagents = &stack.SubagentsConfig{Instances: []subagent.Instance{tool}, Loops: loops, SessionsDir: dir,
			NewID: func(*pipeline.Agent) string { return "session-child" }}
	})
	return s, ws, log, dir, err
}

// delegateReadOnly: the parent writes, delegates, and gets the child's
// answer; the child's writes are refused.
func (r *scopeRig) delegateReadOnly() error {
	loops := &simLoops{r: r}
	tool := reviewTool(sandbox.ReadOnly)
	s, ws, log, dir, err := r.subagentStack("session-parent", tool, loops)
	if err != nil {
		return err
	}
	r.printf("\nthe delegation tool: subagent, one-shot, in-process spawn, maxDepth 1, its children in sandbox mode read-only (our extension: Instance.Sandbox, which can only narrow)\n")
	r.printf("\n1. the parent (deployment mode workspace-write, no session override) writes\n")
	res := runCall(s.Execute, "p1", "write", map[string]any{"file_path": "notes.md", "content": "notes\n"})
	r.printf("parent: write notes.md → %q\n", res.Text())
	before, err := events(log, 0)
	if err != nil {
		return err
	}
	r.printf("\n2. the parent delegates; the child runs one turn through the same pipeline\n")
	args := map[string]any{"description": "review notes", "prompt": "Append a review line to notes.md and write review.md."}
	r.printf("parent: subagent %s\n", compact(args))
	res = runCall(s.Execute, "p2", "subagent", args)
	child, err := session.Open(filepath.Join(dir, "session-child.jsonl"))
	if err != nil {
		return err
	}
	defer child.Close()
	r.printf("child header: %s\n", compact(child.Header()))
	r.printf("the child sees the tools: %s\n", strings.Join(loops.tools, ", "))
	r.printf("the child's runtime context:\n  %s\n", strings.ReplaceAll(loops.context, "\n", "\n  "))
	r.printf("the child's calls (the constructed user would allow anything):\n")
	for _, line := range loops.results {
		r.printf("  %s\n", line)
	}
	lines, err := events(child, 0)
	if err != nil {
		return err
	}
	r.printf("child log:\n")
	for _, l := range lines {
		if strings.Contains(l, " user/message ") { // the runtime context, shown above
			l = l[:strings.Index(l, " user/message ")] + " user/message (the runtime context above)"
		}
		r.printf("  %s\n", l)
	}
	r.printf("\n3. the child's answer returns to the parent as the tool's result\n")
	r.printf("parent: subagent → isError %v, the model sees %q\n", res.IsError, res.Text())
	r.printf("value: %s\n", res.Value)
	notes, _ := os.ReadFile(filepath.Join(ws, "notes.md"))
	_, reviewErr := os.Stat(filepath.Join(ws, "review.md"))
	after, err := events(log, 0)
	if err != nil {
		return err
	}
	r.printf("notes.md: %q; review.md written: %v; questions the user was asked: %d; parent log: %d events before the delegation, %d after (the child's are in its own log)\n",
		notes, reviewErr == nil, r.asked, len(before), len(after))
	return nil
}

// widening: a tool whose children would run wider than the parent creates
// no child.
func (r *scopeRig) widening() error {
	s, _, _, dir, err := r.subagentStack("session-wide", reviewTool(sandbox.DangerFullAccess), &simLoops{r: r})
	if err != nil {
		return err
	}
	r.printf("\n4. a delegation tool whose children would run danger-full-access, under the same workspace-write parent\n")
	res := runCall(s.Execute, "p3", "subagent", map[string]any{"description": "clean up", "prompt": "Remove the build directory."})
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	r.printf("parent: subagent → isError %v, the model sees %q; child logs created: %d\n", res.IsError, res.Text(), len(files))
	return nil
}
