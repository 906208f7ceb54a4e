package shell

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

type rig struct {
	t     *testing.T
	ws    string
	tool  pipeline.Tool
	agent *pipeline.Agent
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	regs, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { regs[0].Close() })
	return &rig{t: t, ws: ws, tool: regs[0].Def, agent: &pipeline.Agent{ID: "a", Session: sessiontest.New(t, "s", ws)}}
}

func (r *rig) run(ctx context.Context, command string) (string, error) {
	args, _ := json.Marshal(map[string]string{"command": strings.ReplaceAll(command, "<ws>", r.ws)})
	call := pipeline.NewCall("c", Name, args, r.agent, ctx)
	if err := pipeline.CheckArgs(r.tool, call); err != nil {
		return "", err
	}
	out, err := r.tool.Run(ctx, call)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(out.Content[0].Text, r.ws, "<ws>"), nil
}

func TestShellBasics(t *testing.T) {
	r := newRig(t, Config{})
	for _, c := range []struct{ cmd, want string }{
		{`cd /tmp && export DSH_EXAMPLE_COUNT=1 && printf "COUNT=%s CWD=%s\n" "$DSH_EXAMPLE_COUNT" "$PWD"`, "COUNT=1 CWD=/tmp"},
		{`DSH_EXAMPLE_COUNT=$((DSH_EXAMPLE_COUNT + 1)); printf "COUNT=%s CWD=%s\n" "$DSH_EXAMPLE_COUNT" "$PWD"`, "COUNT=2 CWD=/tmp"},
		{`exit 9`, "exit\n[shell exited: code 9]\n" + ResetMessage},
		{`echo "${DSH_EXAMPLE_COUNT:-unset} $PWD"`, "unset <ws>"},
	} {
		got, err := r.run(context.Background(), c.cmd)
		if err != nil || got != c.want {
			t.Errorf("%s:\ngot  %q (%v)\nwant %q", c.cmd, got, err, c.want)
		}
	}
}

func mustNew(t *testing.T, cfg Config) pipeline.Tool {
	t.Helper()
	regs, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { regs[0].Close() })
	return regs[0].Def
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func TestShellResults(t *testing.T) {
	r := newRig(t, Config{})
	r.tool = mustNew(t, Config{TimeoutMs: 1500, MaxOutputChars: 8})
	for _, c := range []struct{ cmd, want string }{
		{"false", "[exit code: 1]"},
		{"echo out; (exit 3)", "out\n[exit code: 3]"},
		{"printf '0123456789'", "01234567" + TruncatedMessage},
		{"printf 'a\\r\\nb\\x1b[31mc\\x1b]0;title\\x07d\\n\\n'", "a\n\nbcd\n"}, // onlcr makes the \r\n \r\r\n: two line ends, as upstream's sanitizer reads them
		{"export KEPT=1; sleep 5", "Your command timed out after 2 seconds or experienced an OOM error. Below is partial output:\n\n" + ResetMessage},
		{"echo ${KEPT:-fresh}", "fresh"},
		{"kill -9 $$", "[shell killed by signal: SIGKILL]\n" + ResetMessage},
		{"echo again", "again"},
	} {
		got, err := r.run(context.Background(), c.cmd)
		if err != nil || got != c.want {
			t.Errorf("%s:\ngot  %q (%v)\nwant %q", c.cmd, got, err, c.want)
		}
	}
	for _, c := range []struct{ args, want string }{
		{`{"command":" \n"}`, "command must be a non-empty string"},
	} {
		call := pipeline.NewCall("c", Name, json.RawMessage(c.args), r.agent, context.Background())
		if _, err := r.tool.Run(context.Background(), call); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.args, err, c.want)
		}
	}
	call := pipeline.NewCall("c", Name, json.RawMessage(`{"command":"echo"}`), nil, context.Background())
	if _, err := r.tool.Run(context.Background(), call); err == nil || err.Error() != "bash requires an owning agent session" {
		t.Errorf("agentless: %v", err)
	}
}

func TestAnAbortedCommandEndsTheShell(t *testing.T) {
	r := newRig(t, Config{})
	if got, err := r.run(context.Background(), "export KEPT=1; echo $$"); err != nil || got == "" {
		t.Fatal(got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.run(ctx, "sleep 30"); done <- err }()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, pipeline.ErrAborted) {
			t.Errorf("aborted call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the aborted call did not return")
	}
	if got, err := r.run(context.Background(), "echo ${KEPT:-fresh}"); err != nil || got != "fresh" {
		t.Errorf("after the abort: %q, %v (want a fresh shell)", got, err)
	}
}

func TestCompleteAndPartial(t *testing.T) {
	const s, e = "<S>", "<E>:"
	for _, c := range []struct {
		text string
		ok   bool
		want output
	}{
		{"dsh> <S>\nout\n<E>:0\ndsh> ", true, output{text: "out"}},
		{"<S>\nout\n<E>:12\r\n", true, output{text: "out", code: 12}},
		{"<S>\nout\n<E>:1", false, output{}},   // the status line is not complete
		{"<S>\nout\n<E>:x\n", false, output{}}, // not a status
		{"lost head\n<E>:0\n", true, output{text: "lost head", incomplete: true}},
		{"<S>\n<S>\nsecond\n<E>:0\n", true, output{text: "second"}},
	} {
		got, ok := complete(c.text, s, e, false)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("complete(%q) = %+v, %v; want %+v, %v", c.text, got, ok, c.want, c.ok)
		}
	}
	if got := partialOutput("x<S>\npart\n", s, e); got != (output{text: "part", code: -1}) {
		t.Errorf("partialOutput = %+v", got)
	}
	if got := partialOutput("tail only\n<E>:0\n", s, e); got != (output{text: "tail only", incomplete: true, code: -1}) {
		t.Errorf("partialOutput without a start = %+v", got)
	}
}

func TestScreen(t *testing.T) {
	for _, c := range []struct {
		name   string
		chunks []string
		text   string
		prompt bool
	}{
		{"CRLF and lone CR", []string{"a\r\nb\rc"}, "a\nb\nc", false},
		{"CRLF split across reads", []string{"a\r", "\nb"}, "a\nb", false},
		{"CSI split across reads", []string{"a\x1b[3", "1mb"}, "ab", false},
		{"OSC with BEL and with ST", []string{"a\x1b]0;t\x07b\x1b]0;t\x1b\\c"}, "abc", false},
		{"prompt marker", []string{"out\n\x1b]133;D;0\x07dsh> "}, "out\ndsh> ", true},
		{"prompt marker split", []string{"\x1b]133;", "D;0\x07"}, "", true},
		{"UTF-8 split across reads", []string{"\xe2\x82", "\xac"}, "€", false},
		{"invalid UTF-8", []string{"a\xffb"}, "a\ufffdb", false},
		{"BEL removed", []string{"a\ab"}, "ab", false},
	} {
		s := screen{maxBytes: 1 << 20, maxLines: 100}
		for _, ch := range c.chunks {
			s.write([]byte(ch))
		}
		if s.text != c.text || s.atPrompt() != c.prompt {
			t.Errorf("%s: text %q prompt %v, want %q %v", c.name, s.text, s.atPrompt(), c.text, c.prompt)
		}
	}
	s := screen{maxBytes: 8, maxLines: 3}
	s.write([]byte("1\n2\n3\n4"))
	if s.text != "2\n3\n4" || !s.dropped {
		t.Errorf("line bound: %q, dropped %v", s.text, s.dropped)
	}
	s.write([]byte("567890"))
	if s.text != "\n4567890" || !s.dropped {
		t.Errorf("byte bound: %q", s.text)
	}
}

func TestQuoteAndWrap(t *testing.T) {
	if got, want := quote("a'b\\c\nd\re"), `$'a\'b\\c\nd\re'`; got != want {
		t.Errorf("quote = %s, want %s", got, want)
	}
	if got, want := wrap("echo hi", "S", "E:"), `printf '%s\n' $'S'; eval -- $'echo hi'; __dsh_persistent_bash_status=$?; printf '%s%s\n' $'E:' "$__dsh_persistent_bash_status"`; got != want {
		t.Errorf("wrap = %s\nwant %s", got, want)
	}
}
