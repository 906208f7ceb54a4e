package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/subagent"
)

// answering is a constructed model that answers every call with text.
type answering struct{ text string }

func (m answering) Info() replay.ModelInfo {
	return replay.ModelInfo{Config: json.RawMessage(`{}`), Provider: "test", Model: "answering"}
}

func (m answering) Call(ctx context.Context, req replay.ModelRequest, emit func(json.RawMessage) error) (recording.Reply, error) {
	for _, c := range []llm.Chunk{{Type: llm.BlockStart, BlockType: llm.Text}, {Type: llm.TextDelta, Text: m.text},
		{Type: llm.BlockEnd, Block: &llm.Block{Type: llm.Text, Text: m.text}}, {Type: llm.FinishChunk, Reason: &llm.Finish{Kind: llm.Stop}}} {
		raw, _ := json.Marshal(c)
		if err := emit(raw); err != nil {
			return recording.Reply{}, err
		}
	}
	return recording.Reply{}, nil
}

// TestChildLoopsDriveAChildThroughTheAgentLoop: outside a replay, a child
// is driven by the replay's agent loop (the same turns, steps, claims and
// runtime context as a replayed child), and its answer is the parent's
// tool result; a ChildLoops without a stack starts no child. Planted bug
// caught: a loop that skips the claim or the step (the child log's events
// are checked in order).
func TestChildLoopsDriveAChildThroughTheAgentLoop(t *testing.T) {
	ctx := context.Background()
	loops := replay.NewChildLoops(ctx, func(*stack.Child) replay.Model { return answering{"CHILD_OK"} })
	defer loops.Close()
	st, ws, dir := delegating(t, loops)
	if r := st.Execute(ctx, "c0", "subagent", delegateArgs); !r.IsError || !strings.Contains(r.Text(), "no stack attached") {
		t.Fatalf("without a stack: %q (isError %v), want the start refused", r.Text(), r.IsError)
	}
	loops.Attach(st, ws, nil)
	r := st.Execute(ctx, "c1", "subagent", delegateArgs)
	if r.IsError || r.Text() != "CHILD_OK" {
		t.Fatalf("the parent's result: %q (isError %v)", r.Text(), r.IsError)
	}
	child, err := session.Read(filepath.Join(dir, "child-2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range child.Events {
		if e.Type != "assistant/chunk" {
			types = append(types, e.Type)
		}
	}
	want := "approval/policy agent/inbox/spliced turn/start agent/inbox/spliced subagent/descriptor step/start user/message user/message session/title request/header request/context assistant/message step/end turn/end"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("child log:\n %s\nwant\n %s", got, want)
	}
	if err := loops.Close(); err != nil {
		t.Errorf("the loops met: %v", err)
	}
}

// delegateArgs is the parent's one-shot delegation.
var delegateArgs = json.RawMessage(`{"description":"d","prompt":"Reply with CHILD_OK."}`)

// delegating is a stack in a temporary workspace whose subagent tool
// delegates one-shot children (named child-1, child-2, ...) to loops; dir
// holds the parent's and the children's logs.
func delegating(t *testing.T, loops *replay.ChildLoops) (st *stack.Stack, ws, dir string) {
	t.Helper()
	ws, dir = t.TempDir(), t.TempDir()
	log, err := session.Create(filepath.Join(dir, "parent.jsonl"), session.Header{ID: "parent", Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	one, n := 1, 0
	st, err = stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever,
		Subagents: &stack.SubagentsConfig{Instances: []subagent.Instance{{Name: "subagent", Provider: stack.ProviderSpawn, Background: subagent.OneShot, MaxDepth: &one}},
			Loops: loops, SessionsDir: dir, NewID: func(*pipeline.Agent) string { n++; return fmt.Sprintf("child-%d", n) }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, ws, dir
}

// TestChildLoopsCloseReturnsTheLoopsFlags: a child whose model has no reply
// left is flagged by its loop, and Close returns that flag, naming the
// child, once. Planted bug caught: Close returning the loops' failures but
// not their flags.
func TestChildLoopsCloseReturnsTheLoopsFlags(t *testing.T) {
	ctx := context.Background()
	loops := replay.NewChildLoops(ctx, func(*stack.Child) replay.Model { return replay.ExhaustedModel{} })
	st, ws, _ := delegating(t, loops)
	loops.Attach(st, ws, nil)
	if r := st.Execute(ctx, "c1", "subagent", delegateArgs); !r.IsError {
		t.Fatalf("the parent's result: %q, want the child's failure", r.Text())
	}
	err := loops.Close()
	if want := "child child-1: script exhausted: no reply left"; err == nil || err.Error() != want {
		t.Fatalf("Close: %v, want %q", err, want)
	}
	if err := loops.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
