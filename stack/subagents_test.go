package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/subagent"
)

// brain is a constructed model for one child: each turn it gets the
// messages the turn claimed, may call the child's tools, and returns its
// final text and how the turn ends (turn/end's reason kind).
type brain func(ctx context.Context, c *stack.Child, turn int, msgs []stack.Message) (text, kind string)

// scripted is a constructed agent loop (stack.Loops): every child runs its
// turns with the brain the test gives for its first prompt; a turn is
// turn/start, the pre-step, the brain's calls, assistant/message and
// turn/end in the child's log.
type scripted struct {
	brains func(prompt string) brain
	mu     sync.Mutex
	loops  []*childLoop
}

func (s *scripted) Start(c *stack.Child) (stack.Loop, error) {
	l := &childLoop{c: c, owner: s, idle: closedChan()}
	s.mu.Lock()
	s.loops = append(s.loops, l)
	s.mu.Unlock()
	return l, nil
}

func closedChan() chan struct{} { c := make(chan struct{}); close(c); return c }

type childLoop struct {
	c     *stack.Child
	owner *scripted
	mu    sync.Mutex
	queue []stack.Message
	run   bool
	turn  int
	stop  context.CancelFunc
	idle  chan struct{}
	brain brain
}

func (l *childLoop) Followup(m stack.Message) error { return l.push(m) }
func (l *childLoop) Steer(m stack.Message) error    { return l.push(m) }
func (l *childLoop) Inject(m stack.Message) error   { return l.push(m) }

func (l *childLoop) push(m stack.Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = append(l.queue, m)
	if !l.run {
		l.run = true
		l.idle = make(chan struct{})
		go l.loop()
	}
	return nil
}

func (l *childLoop) loop() {
	for {
		l.mu.Lock()
		msgs := l.queue
		l.queue = nil
		if len(msgs) == 0 {
			l.run = false
			close(l.idle)
			l.mu.Unlock()
			return
		}
		if l.turn == 0 { // a cold resume goes on from the log's turns
			events, _ := l.c.Log().Events()
			for _, e := range events {
				if e.Type == "turn/start" {
					l.turn++
				}
			}
		}
		l.turn++
		turn := l.turn
		ctx, cancel := context.WithCancel(context.Background())
		l.stop = cancel
		if l.brain == nil {
			l.brain = l.owner.brains(textOf(msgs[0]))
		}
		b := l.brain
		l.mu.Unlock()
		log := l.c.Log()
		log.Append("turn/start", map[string]int{"turn": turn})
		l.c.PreStep()
		text, kind := b(ctx, l.c, turn, msgs)
		if ctx.Err() != nil {
			kind = "aborted"
		}
		cancel()
		log.Append("assistant/message", map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]string{"type": "text", "text": text}}}})
		log.Append("turn/end", map[string]any{"turn": turn, "reason": map[string]string{"kind": kind}})
	}
}

func (l *childLoop) Running() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.run }
func (l *childLoop) Idle() bool    { l.mu.Lock(); defer l.mu.Unlock(); return !l.run && len(l.queue) == 0 }

func (l *childLoop) WhenIdle(ctx context.Context) error {
	for {
		l.mu.Lock()
		idle, done := l.idle, !l.run && len(l.queue) == 0
		l.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *childLoop) Cancel(keepInbox bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		l.stop()
	}
	if !keepInbox {
		l.queue = nil
	}
}

func (l *childLoop) Close() error { return nil }

// textOf is a message's first text block.
func textOf(m stack.Message) string {
	var b struct{ Text string }
	if len(m.Content) > 0 {
		json.Unmarshal(m.Content[0], &b)
	}
	return b.Text
}

// rootLoop is the session agent's loop as delegation sees it: it records
// what reaches it (a follow-up opens a turn, a steer joins the running
// one); running is set by the test.
type rootLoop struct {
	mu        sync.Mutex
	running   bool
	followups []stack.Message
	steers    []stack.Message
	got       chan struct{}
}

func newRootLoop() *rootLoop { return &rootLoop{got: make(chan struct{}, 16)} }

func (r *rootLoop) Followup(m stack.Message) error { return r.receive(&r.followups, m) }
func (r *rootLoop) Steer(m stack.Message) error    { return r.receive(&r.steers, m) }
func (r *rootLoop) Inject(m stack.Message) error   { return r.receive(&r.steers, m) }

// receive appends m to the list under the lock and signals await.
func (r *rootLoop) receive(list *[]stack.Message, m stack.Message) error {
	r.mu.Lock()
	*list = append(*list, m)
	r.mu.Unlock()
	r.got <- struct{}{}
	return nil
}

func (r *rootLoop) Running() bool                  { r.mu.Lock(); defer r.mu.Unlock(); return r.running }
func (r *rootLoop) Idle() bool                     { return !r.Running() }
func (r *rootLoop) WhenIdle(context.Context) error { return nil }
func (r *rootLoop) Cancel(bool)                    {}
func (r *rootLoop) Close() error                   { return nil }

// await waits for the next message to reach the root loop.
func (r *rootLoop) await(t *testing.T) {
	t.Helper()
	select {
	case <-r.got:
	case <-time.After(20 * time.Second):
		t.Fatalf("nothing reached the parent's loop (%d follow-ups, %d steers so far)", len(r.followups), len(r.steers))
	}
}

// delegating composes a stack in mode whose session agent delegates
// through cfg (Loops and SessionsDir filled in), its first turn open.
func delegating(t *testing.T, mode sandbox.Mode, cfg stack.SubagentsConfig, brains func(string) brain) (*stack.Stack, string, *session.Log, *rootLoop, string) {
	t.Helper()
	dir := t.TempDir()
	cfg.Loops = &scripted{brains: brains}
	cfg.SessionsDir = dir
	s, ws, log := composed(t, stack.Config{Mode: mode, Approval: stack.ApprovalAsk, Answer: (&granting{}).answer, Subagents: &cfg})
	sessiontest.StartTurn(t, log)
	root := newRootLoop()
	s.AttachLoop(root)
	return s, ws, log, root, dir
}

func one() *int { n := 1; return &n }

// childLogs are the child session logs under dir.
func childLogs(t *testing.T, dir string) []*session.Log {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var out []*session.Log
	for _, f := range files {
		l, err := session.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		out = append(out, l)
	}
	return out
}

// TestSubagentNarrowedChildWriteRefusedBySandbox: a workspace-write parent
// delegates through a tool whose children run read-only (our extension:
// Instance.Sandbox, which can only narrow); the child's bash write is
// refused by the real sandbox, its write tool by the read-only fence, and
// its final text returns to the parent as the tool's result. Its log
// starts with the narrowed sandbox/mode and the never pin; its header links
// it to the parent at depth one. A tool that would widen the parent's mode
// creates no child. Planted bugs caught: Narrow ignored (the child inherits
// workspace-write and writes the file), the result not relayed, a widening
// accepted.
func TestSubagentNarrowedChildWriteRefusedBySandbox(t *testing.T) {
	inst := subagent.Instance{Name: "subagent", Provider: stack.ProviderSpawn, Background: subagent.OneShot, MaxDepth: one(), Sandbox: sandbox.ReadOnly}
	child := func(ctx context.Context, c *stack.Child, turn int, msgs []stack.Message) (string, string) {
		sh := call(t, c.Execute, "c1", "bash", map[string]any{"command": "echo child > child.txt", "description": "write"})
		w := call(t, c.Execute, "c2", "write", map[string]any{"file_path": "child.txt", "content": "child"})
		return "bash: " + sh.Text() + "\nwrite: " + w.Text(), "completed"
	}
	s, ws, log, _, dir := delegating(t, sandbox.WorkspaceWrite, stack.SubagentsConfig{Instances: []subagent.Instance{inst}},
		func(string) brain { return child })
	if res := call(t, s.Execute, "p1", "write", map[string]any{"file_path": "parent.txt", "content": "parent"}); res.IsError {
		t.Fatalf("the parent's own write: %s", res.Text())
	}
	res := call(t, s.Execute, "p2", "subagent", map[string]any{"prompt": "write child.txt", "description": "writer"})
	if res.IsError {
		t.Fatalf("subagent: %s", res.Text())
	}
	if !strings.Contains(res.Text(), sandbox.DenialMarker(sandbox.ReadOnly)) || !strings.Contains(res.Text(), "write: Error: [sandbox: file access denied under read-only mode]") {
		t.Errorf("the parent got %q, want the child's text with both refusals", res.Text())
	}
	if _, err := os.Stat(filepath.Join(ws, "child.txt")); err == nil {
		t.Error("the read-only child wrote child.txt")
	}
	logs := childLogs(t, dir)
	if len(logs) != 1 {
		t.Fatalf("%d child logs", len(logs))
	}
	h := logs[0].Header()
	if h.ParentSession != log.Header().ID || h.DelegationDepth != 1 || h.Origin != "subagent" {
		t.Errorf("child header %+v", h)
	}
	head := lines(t, logs[0], 0)[:4]
	want := []string{`sandbox/mode {"mode":"read-only","source":"delegation"}`, `approval/policy {"policy":"never","source":"delegation"}`,
		`turn/start {"turn":1}`, `subagent/descriptor {"version":2,"mode":"one-shot","provider":"spawn","label":"writer"}`}
	if strings.Join(head, "\n") != strings.Join(want, "\n") {
		t.Errorf("child log head\n got %s\nwant %s", strings.Join(head, "\n"), strings.Join(want, "\n"))
	}

	inst.Sandbox = sandbox.DangerFullAccess
	wide, _, _, _, wdir := delegating(t, sandbox.WorkspaceWrite, stack.SubagentsConfig{Instances: []subagent.Instance{inst}},
		func(string) brain { return child })
	res = call(t, wide.Execute, "p3", "subagent", map[string]any{"prompt": "write", "description": "writer"})
	if want := `Error: a delegated child can only narrow its parent's sandbox: "danger-full-access" is not within the parent's "workspace-write" mode`; res.Text() != want {
		t.Errorf("a widening tool:\n got %q\nwant %q", res.Text(), want)
	}
	if n := len(childLogs(t, wdir)); n != 0 {
		t.Errorf("a widening tool left %d child logs", n)
	}
}

// TestDepthLimitAndFailedRun: a child of a maxDepth 1 tool that delegates
// again is refused with upstream's text; a child cut off at its token limit
// fails the foreground call with the headline and its partial output.
// Planted bugs caught: the child's depth not counted from its parent's
// header, a max-tokens stop read as completed.
func TestDepthLimitAndFailedRun(t *testing.T) {
	inst := subagent.Instance{Name: "subagent", Provider: stack.ProviderSpawn, Background: subagent.OneShot, MaxDepth: one()}
	brains := func(prompt string) brain {
		if prompt == "cut off" {
			return func(context.Context, *stack.Child, int, []stack.Message) (string, string) {
				return "half an answer", "max-tokens"
			}
		}
		return func(ctx context.Context, c *stack.Child, turn int, msgs []stack.Message) (string, string) {
			return call(t, c.Execute, "g1", "subagent", map[string]any{"prompt": "grandchild", "description": "deeper"}).Text(), "completed"
		}
	}
	s, _, _, _, dir := delegating(t, sandbox.WorkspaceWrite, stack.SubagentsConfig{Instances: []subagent.Instance{inst}}, brains)
	res := call(t, s.Execute, "p1", "subagent", map[string]any{"prompt": "delegate again", "description": "nested"})
	if res.Text() != "Error: subagent depth 2 exceeds maxDepth 1" {
		t.Errorf("the nested delegation: %q", res.Text())
	}
	if n := len(childLogs(t, dir)); n != 1 {
		t.Errorf("%d child logs, want the one child", n)
	}
	res = call(t, s.Execute, "p2", "subagent", map[string]any{"prompt": "cut off", "description": "long"})
	if want := "Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\nhalf an answer"; res.Text() != want || !res.IsError {
		t.Errorf("a child at its token limit:\n got %q\nwant %q", res.Text(), want)
	}
}

// TestForkSeedsTheParentsCompletedTurns: a fork child's log starts with a
// copy of the parent's events up to its last turn/end (the turn in flight
// is left out), its header says seedLength, then the seed's end marker and
// the pin. Planted bug caught: the in-flight turn copied into the seed.
func TestForkSeedsTheParentsCompletedTurns(t *testing.T) {
	inst := subagent.Instance{Name: "subagent_fork", Provider: stack.ProviderFork, Background: subagent.OneShot, NoBackground: true, MaxDepth: one()}
	s, _, log, _, dir := delegating(t, sandbox.WorkspaceWrite, stack.SubagentsConfig{Instances: []subagent.Instance{inst}},
		func(string) brain {
			return func(context.Context, *stack.Child, int, []stack.Message) (string, string) {
				return "forked", "completed"
			}
		})
	log.Append("turn/end", map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}})
	log.Append("turn/start", map[string]int{"turn": 2})
	parent := lines(t, log, 0)
	if res := call(t, s.Execute, "p1", "subagent_fork", map[string]any{"prompt": "go on", "description": "fork"}); res.Text() != "forked" {
		t.Fatalf("subagent_fork: %q", res.Text())
	}
	c := childLogs(t, dir)[0]
	seed := len(parent) - 1 // everything but the second turn/start
	if c.Header().SeedLength != seed {
		t.Errorf("seedLength %d, want %d", c.Header().SeedLength, seed)
	}
	got := lines(t, c, 0)
	if strings.Join(got[:seed], "\n") != strings.Join(parent[:seed], "\n") {
		t.Errorf("the seed\n got %s\nwant %s", strings.Join(got[:seed], "\n"), strings.Join(parent[:seed], "\n"))
	}
	if got[seed] != "session/end-seed {}" || got[seed+1] != `approval/policy {"policy":"never","source":"delegation"}` {
		t.Errorf("after the seed: %v", got[seed:seed+2])
	}
}

// TestContinuableChild: a continuable child starts in the background; once
// idle it settles and its parent is told (a new turn when the parent runs
// none, the next step when it does); list_agents shows it ready; a
// send_message to it resumes it cold for a later turn; it reports through
// its own report tool, which its parent does not have. Planted bugs
// caught: the notice sent as a follow-up to a running parent, report
// composed in the parent's scope, a cold resume that does not run the
// relayed turn.
func TestContinuableChild(t *testing.T) {
	cfg := stack.DefaultSubagents()
	cfg.Workflow = false
	var mu sync.Mutex
	var childTools []string
	brains := func(string) brain {
		return func(ctx context.Context, c *stack.Child, turn int, msgs []stack.Message) (string, string) {
			if turn == 1 {
				mu.Lock()
				childTools = c.Tools()
				mu.Unlock()
				return "first: " + textOf(msgs[0]), "completed"
			}
			r := call(t, c.Execute, "r1", "report", map[string]any{"output": "progress"})
			return "later: " + textOf(msgs[0]) + " / " + r.Text(), "completed"
		}
	}
	s, _, _, root, _ := delegating(t, sandbox.WorkspaceWrite, cfg, brains)
	if strings.Contains(strings.Join(s.Tools(), ","), "report") {
		t.Errorf("the parent has the report tool: %v", s.Tools())
	}
	res := call(t, s.Execute, "p1", "subagent", map[string]any{"prompt": "look around", "description": "scout"})
	id, ok := strings.CutPrefix(res.Text(), "started subagent ")
	if !ok {
		t.Fatalf("subagent: %q", res.Text())
	}
	root.await(t)
	root.mu.Lock()
	if len(root.followups) != 1 || len(root.steers) != 0 {
		t.Fatalf("an idle parent got %d follow-ups and %d steers", len(root.followups), len(root.steers))
	}
	notice := root.followups[0]
	root.mu.Unlock()
	src, _ := json.Marshal(notice.Source)
	if !strings.Contains(string(src), `"kind":"subagent-settled"`) || !strings.Contains(string(src), id) {
		t.Errorf("notice source %s", src)
	}
	if text := string(notice.Content[len(notice.Content)-1]); !strings.Contains(text, "first: look around") {
		t.Errorf("the notice carries %s, want the child's output", text)
	}
	mu.Lock()
	if !strings.Contains(","+strings.Join(childTools, ",")+",", ",report,") {
		t.Errorf("the continuable child lacks report: %v", childTools)
	}
	mu.Unlock()
	list := call(t, s.Execute, "l1", "list_agents", map[string]any{})
	if !strings.Contains(list.Text(), id) || !strings.Contains(list.Text(), "ready") {
		t.Errorf("list_agents after the settlement: %q", list.Text())
	}
	if r := call(t, s.Execute, "i1", "interrupt_agent", map[string]any{"agent_id": id}); r.IsError {
		t.Errorf("interrupting a settled child: %q", r.Text())
	}

	root.mu.Lock()
	root.running = true
	root.mu.Unlock()
	if r := call(t, s.Execute, "m1", "send_message", map[string]any{"subagent_id": id, "message": "and now?"}); r.IsError {
		t.Fatalf("send_message: %q", r.Text())
	}
	root.await(t) // the report
	root.await(t) // the settlement
	root.mu.Lock()
	defer root.mu.Unlock()
	if len(root.steers) != 2 || len(root.followups) != 1 {
		t.Fatalf("a running parent got %d steers and %d more follow-ups, want the report and the notice as steers", len(root.steers), len(root.followups)-1)
	}
	rep, _ := json.Marshal(root.steers[0].Source)
	if !strings.Contains(string(rep), `"kind":"subagent-report"`) {
		t.Errorf("report source %s", rep)
	}
	last := string(root.steers[1].Content[len(root.steers[1].Content)-1])
	if !strings.Contains(last, "later: and now?") {
		t.Errorf("the second notice carries %s, want the resumed turn's output", last)
	}
}

// TestControlToolRefusals: send_message to an unknown child, interrupting
// oneself, and list_agents with nothing started answer upstream's texts.
func TestControlToolRefusals(t *testing.T) {
	cfg := stack.DefaultSubagents()
	cfg.Workflow = false
	s, _, log, _, _ := delegating(t, sandbox.WorkspaceWrite, cfg, func(string) brain { return nil })
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send_message", map[string]any{"subagent_id": "nobody", "message": "hi"}, `subagent "nobody" is unavailable`},
		{"interrupt_agent", map[string]any{"agent_id": log.Header().ID}, fmt.Sprintf("agent %q cannot interrupt itself", log.Header().ID)},
	} {
		if r := call(t, s.Execute, "x", tc.tool, tc.args); !r.IsError || !strings.Contains(r.Text(), tc.want) {
			t.Errorf("%s: %q, want an error with %q", tc.tool, r.Text(), tc.want)
		}
	}
	if r := call(t, s.Execute, "l", "list_agents", map[string]any{}); r.IsError {
		t.Errorf("list_agents: %q", r.Text())
	}
}
