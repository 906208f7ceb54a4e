package terminal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

type rig struct {
	reg *pipeline.Registry
}

func newRig(t *testing.T, cfg Config) *rig {
	regs, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{pipelinetest.Registry(t, toolreg.Defs(regs...)...)}
}

func (r *rig) call(agent *pipeline.Agent, name, args string) pipeline.Result {
	return r.reg.Execute(pipeline.NewCall("c", name, json.RawMessage(args), agent, context.Background()))
}

// TestRecordedSequence is the recorded pty-tools session, result by result.
func TestRecordedSequence(t *testing.T) {
	r := newRig(t, Config{MaxResultBytes: 64})
	a := &pipeline.Agent{ID: "root"}
	steps := []struct{ tool, args, text, meta string }{
		{OpenName, `{"type":"shell","name":"main"}`, "started terminal session pty-1 (main) [type: shell]\ndsh> ", ""},
		{SendName, `{"sessionId":"pty-1","text":"printf 'PTY_OK\\n'"}`, "K\ndsh> \n[wait: stdin_read]\n[session: running]\n[output truncated]",
			`{"viewport":"printf 'PTY_OK\\n'\nPTY_OK\ndsh> ","waitReason":"stdin_read","sessionStatus":{"kind":"running"},"truncated":false}`},
		{ReadName, `{"sessionId":"pty-1","offset":0,"count":20}`, "dsh> printf 'PTY_OK\\n'\nPTY_OK\ndsh> \n[lines: 0-3 of 3]", ""},
		{SignalName, `{"sessionId":"pty-missing","signal":"SIGINT"}`, "Error: unknown PTY session pty-missing", ""},
		{CloseName, `{"sessionId":"pty-1"}`, "closed terminal session pty-1", ""},
		{ListName, `{}`, "(no terminal sessions)", ""},
	}
	for _, s := range steps {
		res := r.call(a, s.tool, s.args)
		if res.Text() != s.text {
			t.Fatalf("%s: got %q, want %q", s.tool, res.Text(), s.text)
		}
		if res.IsError != strings.HasPrefix(s.text, "Error: ") || (res.Error != nil && res.Error.Info != nil) {
			t.Fatalf("%s: isError %v, error %+v", s.tool, res.IsError, res.Error)
		}
		if s.meta != "" && string(res.Meta) != s.meta {
			t.Fatalf("%s: meta %s\nwant %s", s.tool, res.Meta, s.meta)
		}
	}
	if got := len(RenderSend(SendResult{Viewport: "printf 'PTY_OK\\n'\nPTY_OK\ndsh> ", WaitReason: "stdin_read", Status: Status{Kind: "running"}}, 64)); got != 64 {
		t.Fatalf("the recorded cut is 64 bytes, got %d", got)
	}
}

func TestRenderSendBound(t *testing.T) {
	res := SendResult{Viewport: strings.Repeat("x", 30) + "abc€def", WaitReason: "stdin_read", Status: Status{Kind: "running"}}
	full := res.Viewport + "\n[wait: stdin_read]\n[session: running]"
	if got := RenderSend(res, len(full)); got != full {
		t.Fatalf("at the bound: %q", got)
	}
	cut := RenderSend(res, len(full)-1)
	if !strings.HasSuffix(cut, "\n[output truncated]") || len(cut) > len(full)-1 {
		t.Fatalf("over the bound: %q", cut)
	}
	// A cut never splits a character: keeping 5 bytes of "abc€def" starts after €.
	suffix := "\n[wait: stdin_read]\n[session: running]\n[output truncated]"
	if got := RenderSend(res, len(suffix)+5); got != "def"+suffix {
		t.Fatalf("utf-8 cut: %q", got)
	}
}

func TestOwnersAndNames(t *testing.T) {
	r := newRig(t, Config{})
	a, b := &pipeline.Agent{ID: "a"}, &pipeline.Agent{ID: "b"}
	for _, c := range []struct {
		agent      *pipeline.Agent
		tool, args string
		want       string
	}{
		{a, OpenName, `{"type":"shell"}`, "started terminal session pty-1 [type: shell]\ndsh> "},
		{a, OpenName, `{"type":"shell","name":"x"}`, "started terminal session pty-2 (x) [type: shell]\ndsh> "},
		{a, OpenName, `{"type":"shell","name":"x"}`, `Error: PTY session name "x" already exists for this owner`},
		{a, OpenName, `{"type":"shell","name":""}`, "Error: PTY session name must be non-empty"},
		{a, OpenName, `{"type":"repl"}`, `Error: no PTY backend registered for "repl"`},
		{b, OpenName, `{"type":"shell","name":"x"}`, "started terminal session pty-3 (x) [type: shell]\ndsh> "},
		{b, ReadName, `{"sessionId":"pty-1"}`, "Error: PTY session pty-1 belongs to another agent"},
		{a, SendName, `{"sessionId":"pty-1","text":"echo hi  there"}`, "echo hi  there\nhi there\ndsh> \n[wait: stdin_read]\n[session: running]"},
		{a, SendName, `{"sessionId":"pty-1","text":"frob"}`, "frob\nfrob: command not found\ndsh> \n[wait: stdin_read]\n[session: running]"},
		{a, ReadName, `{"sessionId":"pty-1","offset":1,"count":2}`, "dsh> frob\nfrob: command not found\n[lines: 2-4 of 5]"},
		{a, SignalName, `{"sessionId":"pty-1","signal":"SIGKILL"}`, "Error: SIGKILL of the shell is rejected; use terminal_close"},
		{a, SendName, `{"sessionId":"pty-1","text":"exit 3"}`, "exit 3\n\n[wait: exited]\n[session: exited]"},
		{a, ListName, `{}`, "pty-1 [type: shell] [session: exited]\npty-2 (x) [type: shell] [session: running]"},
		{b, ListName, `{}`, "pty-3 (x) [type: shell] [session: running]"},
	} {
		if got := r.call(c.agent, c.tool, c.args).Text(); got != c.want {
			t.Fatalf("%s %s: got %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}
