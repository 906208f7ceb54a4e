package sims

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/llm"
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

// childScript is the child's constructed model: its calls, one per step,
// then its answer.
var childScript = []childCall{
	{"c1", "bash", map[string]any{"command": "echo 'review: ok' >> notes.md", "description": "append the review"}},
	{"c2", "write", map[string]any{"file_path": "review.md", "content": "review: ok\n"}},
	{"c3", "bash", map[string]any{"command": "echo 'review: ok' >> notes.md", "description": "append the review",
		"sandbox_permissions": "workspace-write", "justification": "the task appends a review line"}},
}

const childAnswer = "I could not write the review: this session's sandbox is read-only (bash and write were denied, and the escalation was rejected). The review line is: review: ok"

// childModel is the child's constructed model (replay.Model): each call
// streams the next step of childScript, then the answer.
type childModel struct {
	mu   sync.Mutex
	next int
}

func (m *childModel) Info() replay.ModelInfo {
	return replay.ModelInfo{Config: json.RawMessage(`{"kind":"constructed","provider":"dsh-sim","model":"the subagents sim's child"}`),
		Provider: "dsh-sim", Model: "the subagents sim's child"}
}

func (m *childModel) Call(ctx context.Context, req replay.ModelRequest, emit func(json.RawMessage) error) (recording.Reply, error) {
	m.mu.Lock()
	step := m.next
	m.next++
	m.mu.Unlock()
	var chunks []llm.Chunk
	if step < len(childScript) {
		c := childScript[step]
		args, _ := jsjson.Marshal(c.args) // as JSON.stringify writes a model's arguments
		chunks = []llm.Chunk{{Type: llm.BlockStart, BlockType: llm.ToolCall}, {Type: llm.ToolCallDelta, ID: c.id, Name: &c.tool, ArgumentsDelta: string(args)},
			{Type: llm.BlockEnd, Block: &llm.Block{Type: llm.ToolCall, ID: c.id, Name: c.tool, Arguments: string(args)}},
			{Type: llm.FinishChunk, Reason: &llm.Finish{Kind: llm.ToolCalls}}}
	} else {
		chunks = []llm.Chunk{{Type: llm.BlockStart, BlockType: llm.Text}, {Type: llm.TextDelta, Text: childAnswer},
			{Type: llm.BlockEnd, Block: &llm.Block{Type: llm.Text, Text: childAnswer}}, {Type: llm.FinishChunk, Reason: &llm.Finish{Kind: llm.Stop}}}
	}
	for _, c := range chunks {
		raw, err := json.Marshal(c)
		if err != nil {
			return recording.Reply{}, err
		}
		if err := emit(raw); err != nil {
			return recording.Reply{}, err
		}
	}
	return recording.Reply{}, nil
}

// simLoops drives the sim's children with the replay's agent loop over the
// constructed model, and keeps the child it started.
type simLoops struct {
	*replay.ChildLoops
	child *stack.Child
}

func newSimLoops() *simLoops {
	return &simLoops{ChildLoops: replay.NewChildLoops(context.Background(), func(*stack.Child) replay.Model { return &childModel{} })}
}

func (l *simLoops) Start(c *stack.Child) (stack.Loop, error) {
	l.child = c
	return l.ChildLoops.Start(c)
}

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
	r.printf("the parent's calls and the child's model are scripted (the child is driven by the replay's agent loop: one step per call, then its answer), and the user is constructed (allows every question it is asked)\n")
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
	if err == nil {
		loops.Attach(s, ws, nil)
	}
	return s, ws, log, dir, err
}

// delegateReadOnly: the parent writes, delegates, and gets the child's
// answer; the child's writes are refused.
func (r *scopeRig) delegateReadOnly() error {
	loops := newSimLoops()
	defer loops.Close()
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
	r.printf("\n2. the parent delegates; the child runs one turn (a step per call) through the same pipeline\n")
	args := map[string]any{"description": "review notes", "prompt": "Append a review line to notes.md and write review.md."}
	r.printf("parent: subagent %s\n", js(args))
	res = runCall(s.Execute, "p2", "subagent", args)
	child, err := session.Open(filepath.Join(dir, "session-child.jsonl"))
	if err != nil {
		return err
	}
	defer child.Close()
	r.printf("child header: %s\n", js(child.Header()))
	r.printf("the child sees the tools: %s\n", strings.Join(loops.child.Tools(), ", "))
	rc, err := loops.child.RuntimeContext(context.Background())
	if err != nil {
		return err
	}
	r.printf("the child's runtime context:\n  %s\n", strings.ReplaceAll(rc.Text, "\n", "\n  "))
	calls, lines, err := childTurn(child)
	if err != nil {
		return err
	}
	r.printf("the child's calls (the constructed user would allow anything):\n")
	for _, line := range calls {
		r.printf("  %s\n", line)
	}
	r.printf("child log (the model's chunks left out):\n")
	for _, l := range lines {
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
	loops := newSimLoops()
	defer loops.Close()
	s, _, _, dir, err := r.subagentStack("session-wide", reviewTool(sandbox.DangerFullAccess), loops)
	if err != nil {
		return err
	}
	r.printf("\n4. a delegation tool whose children would run danger-full-access, under the same workspace-write parent\n")
	res := runCall(s.Execute, "p3", "subagent", map[string]any{"description": "clean up", "prompt": "Remove the build directory."})
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	r.printf("parent: subagent → isError %v, the model sees %q; child logs created: %d\n", res.IsError, res.Text(), len(files))
	return nil
}

// childTurn renders the child's log: each call with its result's text, and
// the events, the model's chunks left out and the long ones named (the
// request header, the runtime context and the prompt as messages).
func childTurn(log *session.Log) (calls, lines []string, err error) {
	evs, err := log.Events()
	if err != nil {
		return nil, nil, err
	}
	args := map[string]string{}
	for _, e := range evs {
		var d struct {
			CallID, Name, Arguments string
			Message                 struct {
				Content []struct {
					ToolCallID string           `json:"toolCallId"`
					Content    []pipeline.Block `json:"content"`
				} `json:"content"`
				Source struct {
					Kind, Plugin string
				} `json:"source"`
			} `json:"message"`
			Source struct {
				Kind, Plugin string
			} `json:"source"`
		}
		json.Unmarshal(e.Data, &d)
		line := fmt.Sprintf("seq %d %s %s", e.Seq, e.Type, e.Data)
		switch e.Type {
		case session.KindAssistantChunk:
			continue
		case session.KindRequestHeader:
			line = fmt.Sprintf("seq %d request/header (the tools offered, the system prompt: not modelled)", e.Seq)
		case session.KindUserMessage:
			line = fmt.Sprintf("seq %d user/message (source %s %s)", e.Seq, d.Source.Kind, d.Source.Plugin)
			if d.Source.Kind == "user" {
				line = fmt.Sprintf("seq %d user/message (the task)", e.Seq)
			}
		case session.KindToolCall:
			args[d.CallID] = d.Name + " " + d.Arguments
		case session.KindToolResult:
			line = fmt.Sprintf("seq %d tool/result (its text above)", e.Seq)
			for _, c := range d.Message.Content {
				text := ""
				for _, b := range c.Content {
					text += b.Text
				}
				calls = append(calls, fmt.Sprintf("%s → %q", args[c.ToolCallID], text))
			}
		}
		lines = append(lines, line)
	}
	return calls, lines, nil
}
