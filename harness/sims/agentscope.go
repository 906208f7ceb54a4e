package sims

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/stack/subagents"
)

// scopeRig is one composed stack for a scope sim: a workspace outside /tmp,
// the built runner (Landlock), a session log, and the constructed user.
type scopeRig struct {
	env      *harness.Env
	runner   string
	dir      string // scratch directory for logs
	norm     *harness.Normalizer
	b        *bytes.Buffer
	asked    int // questions the constructed user answered
	stacks   []*stack.Stack
	releases []func() // the workspaces' scratch directories
}

func newScopeRig(env *harness.Env) (*scopeRig, error) {
	binDir, runner, err := buildRunner(env)
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	return &scopeRig{env: env, runner: runner, dir: dir, b: &bytes.Buffer{},
		norm: harness.NewNormalizer().Path(binDir, "<bin>").Temp(dir)}, nil
}

func (r *scopeRig) close() {
	for _, s := range r.stacks {
		s.Close()
	}
	for _, release := range r.releases {
		release()
	}
}

// stack composes a stack for session id with a workspace of its own (under
// the scratch root: Landlock's workspace-write grants /tmp wholesale), the given
// deployment mode, policy ask and the constructed user who allows every
// question; cfg adjusts the rest. It opens the session's first turn.
func (r *scopeRig) stack(id string, mode sandbox.Mode, adjust func(*stack.Config)) (*stack.Stack, string, *session.Log, error) {
	ws, release, err := newWorkspace()
	if err != nil {
		return nil, "", nil, err
	}
	r.releases = append(r.releases, release)
	r.norm.Workspace(ws)
	log, err := session.Create(filepath.Join(r.dir, id+".jsonl"), session.Header{ID: id, CreatedAt: 1700000000000, Cwd: ws})
	if err != nil {
		return nil, "", nil, err
	}
	cfg := stack.Config{Workspace: ws, Log: log, Mode: mode, Approval: stack.ApprovalAsk,
		SandboxConfig: stack.SandboxConfig{
			SandboxChain: []string{sandbox.BackendLandlock},
			LauncherPath: r.runner,
		},
		Answer: func(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
			r.asked++
			return pipeline.AllowedOnce, nil
		},
	}
	if adjust != nil {
		adjust(&cfg)
	}
	s, err := stack.New(cfg)
	if err != nil {
		return nil, "", nil, err
	}
	r.stacks = append(r.stacks, s)
	_, err = log.Append(session.KindTurnStart, session.TurnStart{Turn: 1})
	return s, ws, log, err
}

func (r *scopeRig) printf(format string, args ...any) {
	r.b.WriteString(r.norm.String(fmt.Sprintf(format, args...)))
}

// runCall runs one scripted call and returns the model-facing text.
func runCall(run func(context.Context, string, string, json.RawMessage) pipeline.Result, id, tool string, args map[string]any) pipeline.Result {
	raw, _ := json.Marshal(args)
	return run(context.Background(), id, tool, raw)
}

// events renders the events of log from index from: type and data.
func events(log *session.Log, from int) ([]string, error) {
	evs, err := log.Events()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range evs[from:] {
		out = append(out, fmt.Sprintf("seq %d %s %s", e.Seq, e.Type, e.Data))
	}
	return out, nil
}

func fixedNow() time.Time { return time.UnixMilli(1700000000000) }

// The agent-scope sim: who a call belongs to, which registrations apply to
// it, what delegation writes and the child sees, and the page's read-only
// workflow step, on the real stack.
func runAgentScope(env *harness.Env) (map[string][]byte, error) {
	r, err := newScopeRig(env)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.printf("agent scopes, delegation and a read-only workflow step: the real stack (pipeline, approval service, file tools, bash under Landlock);\n")
	r.printf("the model's calls are scripted and the user is constructed (allows every question it is asked)\n")
	for _, part := range []func() error{r.lookupOrder, r.monotonic, r.delegation, r.workflowStep} {
		if err := part(); err != nil {
			return nil, err
		}
	}
	return map[string][]byte{"txt/agent-scope.txt": r.b.Bytes()}, nil
}

// lookupOrder: guards registered root, preset, global, root run global,
// preset, root; listeners run in registration order whatever their scope.
func (r *scopeRig) lookupOrder() error {
	s, _, _, err := r.stack("session-order", sandbox.WorkspaceWrite, nil)
	if err != nil {
		return err
	}
	var trace []string
	guard := func(label string) pipeline.Guard {
		return func(context.Context, *pipeline.Call) (string, bool) { trace = append(trace, label); return "", false }
	}
	listener := func(label string) pipeline.PreExecute {
		return func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
			trace = append(trace, label)
			return next()
		}
	}
	root := s.Agent().Scope()
	for _, reg := range []func() (func(), error){
		func() (func(), error) { return s.In(root).AddGuard(guard("guard of root")) },
		func() (func(), error) { return s.In(s.Standing()).AddGuard(guard("guard of the preset")) },
		func() (func(), error) { return s.In(nil).AddGuard(guard("global guard")) },
		func() (func(), error) { return s.In(root).OnPreExecute(listener("listener of root")) },
		func() (func(), error) { return s.In(nil).OnPreExecute(listener("global listener")) },
		func() (func(), error) { return s.In(s.Standing()).OnPreExecute(listener("listener of the preset")) },
	} {
		if _, err := reg(); err != nil {
			return err
		}
	}
	runCall(s.Execute, "call-order", "read", map[string]any{"file_path": "missing.txt"})
	r.printf("\n1. lookup order (scope tree: agentPreset:standard above agent root)\n")
	r.printf("registered: guard of root, guard of the preset, global guard; listener of root, global listener, listener of the preset\n")
	r.printf("a call of root runs: %s\n", strings.Join(trace, " → "))
	r.printf("(listeners: one list in registration order, global and scoped alike; guards: global, then the chain farthest first)\n")
	return nil
}

// monotonic: a deny registered for a scope against everything that tries
// to undo it.
func (r *scopeRig) monotonic() error {
	r.printf("\n2. a scoped deny cannot be undone: a guard of the preset's standing scope denies writes under secrets/\n")
	undoers := []struct {
		title string
		try   func(s *stack.Stack, child *stack.Child) error
	}{
		{"nothing else registered", func(*stack.Stack, *stack.Child) error { return nil }},
		{"a global listener, prepended later, returns allow without calling next()", func(s *stack.Stack, _ *stack.Child) error {
			_, err := s.In(nil).PrependPreExecute(allowWithoutNext)
			return err
		}},
		{"a listener of the calling agent asks and the user allows once", func(s *stack.Stack, _ *stack.Child) error {
			_, err := s.In(s.Agent().Scope()).PrependPreExecute(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				return pipeline.Ask("write a secret"), nil
			})
			return err
		}},
		{"a global wrapper, prepended, returns a success without running the tool", func(s *stack.Stack, _ *stack.Child) error {
			_, err := s.In(nil).PrependExecute(func(context.Context, *pipeline.Call, func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
				return pipeline.Result{Content: []pipeline.Block{pipeline.TextBlock("written")}}, nil
			})
			return err
		}},
		{"a post-execute listener accepts with the content \"written\"", func(s *stack.Stack, _ *stack.Child) error {
			_, err := s.In(nil).PrependPostExecute(func(context.Context, *pipeline.Call, pipeline.Result, func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
				return pipeline.PostDecision{Kind: pipeline.PostAccept, Content: []pipeline.Block{pipeline.TextBlock("written")}}, nil
			})
			return err
		}},
		{"a nested registration: the calling child's own listener forces allow and its own answerer grants", func(s *stack.Stack, c *stack.Child) error {
			if _, err := s.In(c.Agent().Scope()).PrependPreExecute(allowWithoutNext); err != nil {
				return err
			}
			_, err := s.Answers(c.Agent().Scope()).PrependAnswer(answerWith(pipeline.AllowedOnce))
			return err
		}},
	}
	for i, u := range undoers {
		s, ws, _, err := r.stack(fmt.Sprintf("session-deny-%d", i+1), sandbox.WorkspaceWrite, nil)
		if err != nil {
			return err
		}
		if _, err := s.In(s.Standing()).AddGuard(func(ctx context.Context, call *pipeline.Call) (string, bool) {
			var a struct {
				Path string `json:"file_path"`
			}
			call.DecodeArgs(&a)
			return "the preset forbids writes under secrets/", call.Name() == "write" && strings.HasPrefix(a.Path, "secrets/")
		}); err != nil {
			return err
		}
		run := s.Execute
		who := "root"
		var child *stack.Child
		if strings.HasPrefix(u.title, "a nested") {
			child, err = s.Delegate(stack.Delegation{ID: "child", SessionID: fmt.Sprintf("session-deny-%d-child", i+1), LogPath: filepath.Join(r.dir, fmt.Sprintf("deny-%d-child.jsonl", i+1)), Now: fixedNow})
			if err != nil {
				return err
			}
			defer child.End()
			if err := child.BeginTurn(); err != nil {
				return err
			}
			run, who = child.Execute, "child (delegated by root)"
		}
		if err := u.try(s, child); err != nil {
			return err
		}
		res := runCall(run, fmt.Sprintf("call-deny-%d", i+1), "write", map[string]any{"file_path": "secrets/key", "content": "k"})
		_, statErr := os.Stat(filepath.Join(ws, "secrets", "key"))
		msg := ""
		if res.Error != nil {
			msg = res.Error.Message
		}
		r.printf("%c. %s; call of %s → isError %v, error.message %q, model sees %q; secrets/key written: %v\n",
			'a'+i, u.title, who, res.IsError, msg, res.Text(), statErr == nil)
	}
	return nil
}

// delegation: the parent's read-only override and the never pin reach the
// child; what the child's log, header and model see.
func (r *scopeRig) delegation() error {
	r.asked = 0
	s, ws, log, err := r.stack("session-parent", sandbox.WorkspaceWrite, nil)
	if err != nil {
		return err
	}
	if _, err := policy.SetSandboxMode(log, sandbox.ReadOnly); err != nil {
		return err
	}
	before, err := events(log, 0)
	if err != nil {
		return err
	}
	childPath := filepath.Join(r.dir, "child.jsonl")
	c, err := s.Delegate(stack.Delegation{ID: "child", SessionID: "session-child", LogPath: childPath, Label: "review", Now: fixedNow})
	if err != nil {
		return err
	}
	defer c.End()
	r.printf("\n3. delegation: the user switched the parent session to read-only (sandbox/mode read-only), then root delegated a child\n")
	raw, err := os.ReadFile(childPath)
	if err != nil {
		return err
	}
	r.printf("child header: %s\n", strings.SplitN(string(raw), "\n", 2)[0])
	if err := c.BeginTurn(); err != nil {
		return err
	}
	head, err := events(c.Log(), 0)
	if err != nil {
		return err
	}
	r.printf("child log:\n  %s\n", strings.Join(head, "\n  "))
	rc, err := c.RuntimeContext(context.Background())
	if err != nil {
		return err
	}
	r.printf("the child's runtime context (its next request):\n  %s\n", strings.ReplaceAll(rc.Text, "\n", "\n  "))
	r.printf("the child's calls (the constructed user would allow anything):\n")
	for _, x := range []struct {
		id, tool string
		args     map[string]any
	}{
		{"call-c1", "write", map[string]any{"file_path": "notes.md", "content": "n"}},
		{"call-c2", "write", map[string]any{"file_path": "notes.md", "content": "n", "sandbox_permissions": "workspace-write", "justification": "the task writes notes"}},
		{"call-c3", "bash", map[string]any{"command": "echo n > notes.md", "description": "write notes"}},
	} {
		res := runCall(c.Execute, x.id, x.tool, x.args)
		r.printf("  %s %s → %q\n", x.tool, js(x.args), res.Text())
	}
	_, statErr := os.Stat(filepath.Join(ws, "notes.md"))
	after, err := events(c.Log(), len(head))
	if err != nil {
		return err
	}
	r.printf("child log after the calls:\n  %s\n", strings.Join(after, "\n  "))
	parentAfter, err := events(log, 0)
	if err != nil {
		return err
	}
	r.printf("notes.md written: %v; questions the user was asked: %d; parent log: %d events before, %d after (untouched)\n", statErr == nil, r.asked, len(before), len(parentAfter))
	return nil
}

// workflowStep: the page's example, a step restricted to read-only tools in
// a session that writes.
func (r *scopeRig) workflowStep() error {
	s, ws, log, err := r.stack("session-workflow", sandbox.ReadOnly, nil)
	if err != nil {
		return err
	}
	if _, err := policy.SetSandboxMode(log, sandbox.WorkspaceWrite); err != nil {
		return err
	}
	r.printf("\n4. a workflow step restricted to read-only tools (our design: upstream's workflow has no such option)\n")
	r.printf("the session (sandbox/mode workspace-write) has the tools: %s\n", strings.Join(s.Tools(), ", "))
	res := runCall(s.Execute, "call-w1", "write", map[string]any{"file_path": "plan.md", "content": "1. survey\n"})
	r.printf("session: write plan.md → %q\n", res.Text())
	step, err := s.Delegate(stack.Delegation{ID: "step-survey", SessionID: "session-step", LogPath: filepath.Join(r.dir, "step.jsonl"), Label: "survey", Restriction: subagents.Restriction{ReadOnly: true}, Now: fixedNow})
	if err != nil {
		return err
	}
	if err := step.BeginTurn(); err != nil {
		return err
	}
	r.printf("step \"survey\" (delegated, inherits workspace-write) sees the tools: %s\n", strings.Join(step.Tools(), ", "))
	if _, err := s.In(nil).PrependPreExecute(allowWithoutNext); err != nil {
		return err
	}
	r.printf("(then a global listener that returns allow without next() is prepended)\n")
	for _, x := range []struct {
		id, tool string
		args     map[string]any
	}{
		{"call-s1", "write", map[string]any{"file_path": "plan.md", "content": "rewritten\n"}},
		{"call-s2", "bash", map[string]any{"command": "echo rewritten > plan.md", "description": "rewrite"}},
		{"call-s3", "read", map[string]any{"file_path": "plan.md"}},
	} {
		res := runCall(step.Execute, x.id, x.tool, x.args)
		r.printf("step: %s %s → %q\n", x.tool, js(x.args), res.Text())
	}
	b, err := os.ReadFile(filepath.Join(ws, "plan.md"))
	if err != nil {
		return err
	}
	desc, err := events(step.Log(), 0)
	if err != nil {
		return err
	}
	r.printf("plan.md after the step: %q\nstep log: %s\n", b, desc[len(desc)-1])
	if err := step.End(); err != nil {
		return err
	}
	res = runCall(step.Execute, "call-s4", "read", map[string]any{"file_path": "plan.md"})
	r.printf("after the step ended: read → %q\n", res.Text())
	res = runCall(s.Execute, "call-w2", "edit", map[string]any{"file_path": "plan.md", "old_string": "survey", "new_string": "survey done"})
	r.printf("session: edit plan.md → %q\n", res.Text())
	return nil
}
