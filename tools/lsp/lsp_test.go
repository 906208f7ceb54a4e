package lsp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs node on PATH (the recording's fixture language server is a node script)")
	}
}

// workspace copies the recorded lsp-definition workspace (the fixture
// server and subject.ts, under transcripts/ with their licence) into a temp
// directory.
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for _, n := range []string{"lsp-server.mjs", "subject.ts"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "transcripts", "lsp-definition", "workspace", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func newTool(t *testing.T, cfg Config) (*Tool, *pipeline.Registry) {
	t.Helper()
	tool, err := build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tool.Close() })
	reg := pipelinetest.Registry(t, tool.definition())
	return tool, reg
}

func call(reg *pipeline.Registry, args string) pipeline.Result {
	return reg.Execute(pipeline.NewCall("c", Name, json.RawMessage(args), &pipeline.Agent{ID: "root"}, context.Background()))
}

var fixture = Server{Name: "fixture", Command: []string{"node", "./lsp-server.mjs"}, Extensions: []string{".ts"}}

// TestRecordedDefinition runs the recording's own fixture server for real.
func TestRecordedDefinition(t *testing.T) {
	needNode(t)
	ws := workspace(t)
	var confined [][]string
	_, reg := newTool(t, Config{Workspace: ws, Servers: []Server{fixture}, MaxLocations: 1, Timeout: 2 * time.Second,
		Confine: func(_ context.Context, argv []string) ([]string, []*os.File, error) {
			confined = append(confined, argv)
			return argv, nil, nil
		}})
	r := call(reg, `{"operation":"goToDefinition","file_path":"subject.ts","line":1,"character":7}`)
	if r.IsError || r.Text() != "subject.ts:1:7\n… 1 more location omitted (limit 1)." {
		t.Fatalf("got %+v", r)
	}
	// The server keeps running: a second query reuses it.
	if r := call(reg, `{"operation":"goToDefinition","file_path":"`+filepath.Join(ws, "subject.ts")+`","line":2,"character":1}`); r.Text() != "subject.ts:1:7\n… 1 more location omitted (limit 1)." {
		t.Fatalf("second query %+v", r)
	}
	if len(confined) != 1 || strings.Join(confined[0], " ") != "node ./lsp-server.mjs" {
		t.Fatalf("confined %q", confined)
	}
	// The fixture answers nothing but definitions: a request it ignores
	// ends at the timeout.
	if r := call(reg, `{"operation":"findReferences","file_path":"subject.ts","line":1,"character":7}`); !r.IsError || !strings.HasSuffix(r.Text(), "context deadline exceeded") {
		t.Fatalf("unanswered request %+v", r)
	}
}

// TestServerConfinedByBwrap runs the fixture server under bwrap as the
// stack confines it (workspace-write in the workspace): bwrap binds the
// workspace through a descriptor the confinement returns with the argv,
// which the server must inherit, or bwrap fails to start it.
func TestServerConfinedByBwrap(t *testing.T) {
	needNode(t)
	p := sandboxtest.Provider(t, sandbox.BackendBwrap) // skips without a usable bwrap
	ws := workspace(t)
	_, reg := newTool(t, Config{Workspace: ws, Servers: []Server{fixture}, Timeout: 5 * time.Second,
		Confine: func(ctx context.Context, argv []string) ([]string, []*os.File, error) {
			c, err := p.Confine(ctx, argv, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
			if err != nil {
				return nil, nil, err
			}
			argv, files := c.Inherit(nil)
			return argv, files, nil
		}})
	if r := call(reg, `{"operation":"goToDefinition","file_path":"subject.ts","line":1,"character":7}`); r.IsError || !strings.HasPrefix(r.Text(), "subject.ts:1:7") {
		t.Fatalf("got %+v", r)
	}
}

func TestRenderLocations(t *testing.T) {
	tool := &Tool{cfg: Config{Workspace: "/ws", MaxLocations: 2}}
	locs := []Location{{"file:///ws/a.ts", 0, 6}, {"file:///ws/sub/b.ts", 9, 0}, {"file:///elsewhere/c.ts", 1, 1}, {"file:///ws/d.ts", 2, 2}}
	if got := tool.renderLocations(locs); got != "a.ts:1:7\nsub/b.ts:10:1\n… 2 more locations omitted (limit 2)." {
		t.Fatalf("%q", got)
	}
	if got := tool.renderLocations(locs[1:3]); got != "sub/b.ts:10:1\n/elsewhere/c.ts:2:2" {
		t.Fatalf("at the limit %q", got)
	}
	if got := tool.renderLocations(nil); got != "No results." {
		t.Fatalf("none %q", got)
	}
	links, err := parseLocations(json.RawMessage(`[{"targetUri":"file:///ws/x.ts","targetRange":{"start":{"line":0,"character":0}},"targetSelectionRange":{"start":{"line":4,"character":2}}}]`))
	if err != nil || len(links) != 1 || links[0].Line != 4 || links[0].Character != 2 {
		t.Fatalf("links %+v %v", links, err)
	}
	if _, err := parseLocations(json.RawMessage(`[{"nope":1}]`)); err == nil {
		t.Fatal("a malformed location was accepted")
	}
	for raw, want := range map[string]string{
		`null`:                 "No results.",
		`{"contents":"plain"}`: "plain",
		`{"contents":{"kind":"markdown","value":"**x**"}}`: "**x**",
		`{"contents":["a",{"language":"ts","value":"b"}]}`: "a\n\nb",
	} {
		if got := renderHover(json.RawMessage(raw)); got != want {
			t.Errorf("hover %s: %q", raw, got)
		}
	}
}

func TestFailures(t *testing.T) {
	needNode(t)
	ws := workspace(t)
	os.WriteFile(filepath.Join(ws, "die.mjs"), []byte("process.exit(3)\n"), 0o644)
	_, reg := newTool(t, Config{Workspace: ws, Servers: []Server{fixture, {Name: "dies", Command: []string{"node", "./die.mjs"}, Extensions: []string{".js"}}}})
	os.WriteFile(filepath.Join(ws, "a.js"), []byte("x\n"), 0o644)
	for args, want := range map[string]string{
		`{"operation":"goToDefinition","file_path":"x.go","line":1,"character":1}`:         `Error: no language server is configured for "x.go"`,
		`{"operation":"goToDefinition","file_path":"missing.ts","line":1,"character":1}`:   `Error: cannot read "missing.ts": no such file or directory`,
		`{"operation":"goToDefinition","file_path":"subject.ts","line":0,"character":1}`:   `Error: line must be a positive integer`,
		`{"operation":"goToDefinition","file_path":"subject.ts","line":1,"character":1.5}`: `Error: character must be a positive integer`,
		`{"operation":"rename","file_path":"subject.ts","line":1,"character":1}`:           `Error: invalid arguments`,
		`{"operation":"goToDefinition","file_path":"a.js","line":1,"character":1}`:         `Error: language server "dies" could not start: initialize: the language server closed its output`,
	} {
		if r := call(reg, args); !r.IsError || !strings.HasPrefix(r.Text(), want) {
			t.Errorf("%s: got %q, want prefix %q", args, r.Text(), want)
		}
	}
	// A confinement that fails is the call's failure: nothing runs.
	_, reg2 := newTool(t, Config{Workspace: ws, Servers: []Server{fixture}, Confine: func(context.Context, []string) ([]string, []*os.File, error) {
		return nil, nil, os.ErrPermission
	}})
	if r := call(reg2, `{"operation":"goToDefinition","file_path":"subject.ts","line":1,"character":7}`); !r.IsError || !strings.Contains(r.Text(), "could not start: permission denied") {
		t.Fatalf("refused confinement: %+v", r)
	}
}

// TestServerOutlivesTheThreadThatStartedIt: the server's PDEATHSIG is tied
// by the kernel to the thread that started it, not the process, and a
// goroutine that locks a thread and returns ends that thread (the in-process
// Landlock path does so on purpose). A server started from such a goroutine
// must keep answering after that thread is gone.
func TestServerOutlivesTheThreadThatStartedIt(t *testing.T) {
	needNode(t)
	ws := workspace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type started struct {
		c        *client
		err      error
		mainTask bool
	}
	var s started
	// The runtime parks, rather than ends, the process's main thread when
	// a goroutine locked to it returns: try again until the goroutine runs
	// on another thread (the first try nearly always does).
	for try := 0; try < 20; try++ {
		ch := make(chan started, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			if syscall.Gettid() == os.Getpid() {
				ch <- started{mainTask: true}
				return
			}
			c, err := start(ctx, fixture.Command, nil, ws, "file://"+ws, os.Environ())
			ch <- started{c: c, err: err}
		}()
		if s = waittest.Recv(t, ch, "the server to start"); !s.mainTask {
			break
		}
	}
	if s.mainTask {
		t.Fatal("20 goroutines all ran on the main thread")
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	defer s.c.close()
	time.Sleep(300 * time.Millisecond) // the thread's end and any PDEATHSIG land
	params := map[string]any{"textDocument": map[string]any{"uri": "file://" + filepath.Join(ws, "subject.ts")}, "position": map[string]any{"line": 0, "character": 6}}
	if _, err := s.c.request(ctx, "textDocument/definition", params); err != nil {
		t.Fatalf("the server no longer answers after the thread that started it ended: %v", err)
	}
}
