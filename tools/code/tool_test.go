package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// The tools in these tests are constructed toys (echo, say, slow, mutate,
// block, fail, defer); the registry, the pipeline stages, the session log
// and the Node runtime are real.

var sharedRuntime struct {
	once sync.Once
	r    *noderuntime.Runtime
	err  error
}

func realRuntime(t testing.TB) *noderuntime.Runtime {
	sharedRuntime.once.Do(func() { sharedRuntime.r, sharedRuntime.err = noderuntime.New(noderuntime.Config{}) })
	if sharedRuntime.err != nil {
		t.Fatal(sharedRuntime.err)
	}
	return sharedRuntime.r
}

type env struct {
	t     *testing.T
	reg   *pipeline.Registry
	log   *session.Log
	agent *pipeline.Agent
	tool  *Tool
	ws    string
	// entered gets the call id of every block call once its body runs
	// (which also creates <ws>/block-entered).
	entered chan string

	mu       sync.Mutex
	warnings []string
	trace    []string
	running  int
	peak     int
}

func (e *env) note(s string) {
	e.mu.Lock()
	e.trace = append(e.trace, s)
	e.mu.Unlock()
}

func (e *env) enter() {
	e.mu.Lock()
	e.running++
	e.peak = max(e.peak, e.running)
	e.mu.Unlock()
}

func (e *env) leave() {
	e.mu.Lock()
	e.running--
	e.mu.Unlock()
}

func textOut(text string, value any) pipeline.Output {
	v, _ := json.Marshal(value)
	return pipeline.Output{Value: v, Content: []pipeline.Block{pipeline.TextBlock(text)}}
}

func newEnv(t *testing.T, cfg Config, rt Runner, deps ...func(*Deps)) *env {
	t.Helper()
	if cfg.Mode == "" {
		cfg.Mode = "code"
	}
	ws := t.TempDir()
	e := &env{t: t, reg: pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {})), ws: ws, entered: make(chan string, 16)}
	e.log = sessiontest.New(t, "s1", ws)
	e.agent = &pipeline.Agent{ID: "root", Session: e.log}
	d := Deps{
		Registry: e.reg,
		Runtime:  rt,
		Policy: func(*pipeline.Call) (sandbox.Policy, error) {
			return sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}, nil
		},
		Warn: func(s string) { e.mu.Lock(); e.warnings = append(e.warnings, s); e.mu.Unlock() },
	}
	for _, f := range deps {
		f(&d)
	}
	var err error
	if e.tool, err = build(cfg, d); err != nil {
		t.Fatal(err)
	}
	tools := []pipeline.Tool{
		e.tool.definition(),
		{Name: "echo", ConcurrencySafe: true, Run: func(ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
			return pipeline.Output{Value: c.Args(), Content: []pipeline.Block{pipeline.TextBlock(string(c.Args()))}}, nil
		}},
		{Name: "say", Run: func(ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
			var a struct{ Text string }
			c.DecodeArgs(&a)
			return textOut(a.Text+"\n", map[string]any{"stdout": map[string]any{"text": a.Text + "\n"}}), nil
		}},
		{Name: "slow", ConcurrencySafe: true, Parameters: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"number"}}}`), Run: func(ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
			var a struct{ Ms int }
			c.DecodeArgs(&a)
			e.enter()
			e.note("start " + c.CallID())
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			case <-ctx.Done():
			}
			e.note("end " + c.CallID())
			e.leave()
			return textOut("slept", a.Ms), nil
		}},
		{Name: "mutate", Run: func(ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
			e.enter()
			e.note("start " + c.CallID())
			time.Sleep(100 * time.Millisecond)
			e.note("end " + c.CallID())
			e.leave()
			return textOut("mutated", true), nil
		}},
		{Name: "block", Run: func(ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
			e.note("block " + c.CallID())
			os.WriteFile(filepath.Join(e.ws, "block-entered"), nil, 0o600)
			e.entered <- c.CallID()
			<-ctx.Done()
			return pipeline.Output{}, pipeline.ErrAborted
		}},
		{Name: "fail", Run: func(ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
			return pipeline.Output{}, errors.New(`cannot read "/ws/missing.txt": not found`)
		}},
		{Name: "image", Run: func(ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
			var a struct{ Fail bool }
			c.DecodeArgs(&a)
			out := pipeline.Output{Value: json.RawMessage(`{"path":"p.png"}`), Content: []pipeline.Block{pipeline.TextBlock("<path>p.png</path>"), pipeline.ImageBlock(json.RawMessage(`{"attachmentId":"sha256:1"}`))},
				ContextMessages: []pipeline.ContextMessage{{Plugin: "defer", Texts: []string{"after image"}}}}
			if a.Fail {
				return out, errors.New("image refused")
			}
			return out, nil
		}},
		{Name: "defer", ConcurrencySafe: true, Run: func(ctx context.Context, c *pipeline.Call) (pipeline.Output, error) {
			var a struct{ Ctx string }
			c.DecodeArgs(&a)
			return pipeline.Output{Value: json.RawMessage(`null`), Content: []pipeline.Block{pipeline.TextBlock("deferred")}, ContextMessages: []pipeline.ContextMessage{{Plugin: "defer", Texts: []string{a.Ctx}}}}, nil
		}},
	}
	for _, tl := range tools {
		if _, err := e.reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func args(code, desc string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"code": code, "description": desc})
	return b
}

// runDeadline bounds every test run: a run that hangs (a lost reply, a
// settle that waits for ever) fails its test instead of the package's. The
// run's context ends there; a run that does not honour it either fails
// the test a little later (waittest).
const runDeadline = 60 * time.Second

func (e *env) run(ctx context.Context, callID, code string) pipeline.Result {
	e.t.Helper()
	ctx, cancel := context.WithTimeoutCause(ctx, runDeadline, errRunDeadline)
	defer cancel()
	var res pipeline.Result
	waittest.Within(e.t, runDeadline+waittest.Deadline, "run "+callID+" to return", func() {
		res = e.reg.Execute(pipeline.NewCall(callID, Name, args(code, "Run a test program"), e.agent, ctx))
	})
	if context.Cause(ctx) == errRunDeadline {
		e.t.Errorf("run %s did not settle within %s", callID, runDeadline)
	}
	return res
}

var errRunDeadline = errors.New("the test's run deadline passed")

// events returns the nested-call events of the log as compact JSON lines.
func (e *env) events() []string {
	evs, err := e.log.Events()
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Type == session.KindCodeDispatchStart || ev.Type == session.KindCodeDispatch {
			out = append(out, ev.Type+" "+string(ev.Data))
		}
	}
	return out
}

// eventOrder lists the nested-call events as "type subCallId".
func (e *env) eventOrder() string {
	var order []string
	for _, ev := range e.events() {
		typ, rest, _ := strings.Cut(ev, " ")
		_, id, _ := strings.Cut(rest, `"subCallId":"`)
		id, _, _ = strings.Cut(id, `"`)
		order = append(order, typ+" "+id)
	}
	return strings.Join(order, ",")
}

func TestTwoSequentialCallsAsRecorded(t *testing.T) {
	e := newEnv(t, Config{}, realRuntime(t))
	res := e.run(context.Background(), "call_1", `
const out1 = await tools.say({text: "CODE_ONE"});
const out2 = await tools.say({text: "CODE_TWO"});
console.log("captured output");
return out1.stdout.text.trim() + "+" + out2.stdout.text.trim();`)
	if res.IsError || res.Text() != "captured output\nCODE_ONE+CODE_TWO" || res.Meta != nil {
		t.Fatalf("result %+v", res)
	}
	if string(res.Value) != `{"logs":["captured output"],"result":"CODE_ONE+CODE_TWO"}` {
		t.Errorf("value %s", res.Value)
	}
	want := []string{
		`tool/code-dispatch-start {"rootCallId":"call_1","parentCallId":"call_1","subCallId":"call_1:code:1","name":"say","arguments":{"text":"CODE_ONE"}}`,
		`tool/code-dispatch {"rootCallId":"call_1","parentCallId":"call_1","subCallId":"call_1:code:1","name":"say","arguments":{"text":"CODE_ONE"},"isError":false,"content":[{"type":"text","text":"CODE_ONE\n"}]}`,
		`tool/code-dispatch-start {"rootCallId":"call_1","parentCallId":"call_1","subCallId":"call_1:code:2","name":"say","arguments":{"text":"CODE_TWO"}}`,
		`tool/code-dispatch {"rootCallId":"call_1","parentCallId":"call_1","subCallId":"call_1:code:2","name":"say","arguments":{"text":"CODE_TWO"},"isError":false,"content":[{"type":"text","text":"CODE_TWO\n"}]}`,
	}
	if got := e.events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n got: %s\nwant: %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNestedCallsGoThroughThePipeline(t *testing.T) {
	e := newEnv(t, Config{}, realRuntime(t))
	var seen []string
	var mu sync.Mutex
	e.reg.OnPreExecute(func(ctx context.Context, c *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		mu.Lock()
		parent := "<nil>"
		if c.Parent() != nil {
			parent = c.Parent().CallID()
		}
		seen = append(seen, c.CallID()+" root="+c.RootCallID()+" parent="+parent+" agent="+c.Agent().ID)
		mu.Unlock()
		if c.Name() == "echo" {
			return pipeline.Deny("echo is off in this session"), nil
		}
		return next()
	})
	e.reg.AddGuard(func(ctx context.Context, c *pipeline.Call) (string, bool) {
		return "mutations are frozen", c.Name() == "mutate"
	})
	res := e.run(context.Background(), "c2", `
const out: string[] = [];
for (const f of [() => tools.echo({}), () => tools.mutate({}), () => tools.fail({})]) {
  try { await f(); out.push("ok"); } catch (e) { out.push(e.name + "/" + e.toolName + ": " + e.message); }
}
return out;`)
	want := `[
  "ToolCallError/echo: echo is off in this session",
  "ToolCallError/mutate: mutations are frozen",
  "ToolCallError/fail: cannot read \"/ws/missing.txt\": not found"
]`
	if res.IsError || res.Text() != want {
		t.Fatalf("text %q", res.Text())
	}
	if strings.Join(seen, "|") != "c2 root=c2 parent=<nil> agent=root|c2:code:1 root=c2 parent=c2 agent=root|c2:code:2 root=c2 parent=c2 agent=root|c2:code:3 root=c2 parent=c2 agent=root" {
		t.Errorf("identities %q", seen)
	}
	evs := e.events()
	if len(evs) != 6 || !strings.Contains(evs[1], `"isError":true,"content":[{"type":"text","text":"Error: echo is off in this session"}]`) ||
		!strings.Contains(evs[5], `"content":[{"type":"text","text":"Error: cannot read \"/ws/missing.txt\": not found"}]`) {
		t.Errorf("events %q", evs)
	}
}

type askApprover struct {
	mu  sync.Mutex
	ids []string
}

func (a *askApprover) Request(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids = append(a.ids, req.CallID)
	return pipeline.Rejected, nil
}

func TestNestedApprovalCarriesTheSubCallID(t *testing.T) {
	e := newEnv(t, Config{}, realRuntime(t))
	ap := &askApprover{}
	e.reg.SetApprover(ap)
	e.reg.OnPreExecute(func(ctx context.Context, c *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		if c.Name() == "mutate" {
			return pipeline.Ask("mutations need a yes"), nil
		}
		return next()
	})
	res := e.run(context.Background(), "c3", `try { await tools.mutate({}); } catch (e) { return e.message; }`)
	if res.Text() != `the user rejected tool "mutate"` || strings.Join(ap.ids, ",") != "c3:code:1" {
		t.Errorf("text %q asked %v", res.Text(), ap.ids)
	}
}

func TestScheduling(t *testing.T) {
	t.Run("safe calls overlap, one start per call in submission order", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t))
		res := e.run(context.Background(), "p", `await Promise.all([800, 800, 800].map(ms => tools.slow({ms}))); return "ok";`)
		if res.IsError || e.peak != 3 {
			t.Errorf("peak %d (%s)", e.peak, res.Text())
		}
		var starts []string
		for _, ev := range e.events() {
			if strings.HasPrefix(ev, session.KindCodeDispatchStart+" ") {
				starts = append(starts, ev[strings.Index(ev, `"subCallId":"`)+13:][:5])
			}
		}
		if strings.Join(starts, ",") != "p:cod,p:cod,p:cod" || !strings.Contains(strings.Join(e.events(), "\n"), "p:code:3") {
			t.Errorf("starts %v", e.events())
		}
	})
	t.Run("maxParallelSubCalls caps the overlap", func(t *testing.T) {
		e := newEnv(t, Config{MaxParallelSubCalls: 2}, realRuntime(t))
		e.run(context.Background(), "p", `await Promise.all([200, 200, 200, 200].map(ms => tools.slow({ms})));`)
		if e.peak != 2 {
			t.Errorf("peak %d, want 2", e.peak)
		}
	})
	t.Run("an exclusive call runs alone, between its neighbours", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t))
		e.run(context.Background(), "x", `await Promise.all([tools.slow({ms: 200}), tools.mutate({}), tools.slow({ms: 10})]);`)
		want := "start x:code:1,end x:code:1,start x:code:2,end x:code:2,start x:code:3,end x:code:3"
		if got := strings.Join(e.trace, ","); got != want || e.peak != 1 {
			t.Errorf("trace %s (peak %d), want %s", got, e.peak, want)
		}
	})
	t.Run("a queued call that the commit frees logs its start before the settle event", func(t *testing.T) {
		// Upstream appends a settle event in a task of its own, and its
		// driver starts the next queued call at once (oracle recording
		// code-nested-calls: Promise.all of two bash calls).
		e := newEnv(t, Config{}, realRuntime(t))
		e.run(context.Background(), "q", `await Promise.all([tools.mutate({}), tools.mutate({})]);`)
		want := "tool/code-dispatch-start q:code:1,tool/code-dispatch-start q:code:2,tool/code-dispatch q:code:1,tool/code-dispatch q:code:2"
		if got := e.eventOrder(); got != want {
			t.Errorf("events %s, want %s", got, want)
		}
	})
	t.Run("a call submitted after the settle keeps the plain order", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t))
		e.run(context.Background(), "s", `await tools.mutate({}); await tools.mutate({});`)
		want := "tool/code-dispatch-start s:code:1,tool/code-dispatch s:code:1,tool/code-dispatch-start s:code:2,tool/code-dispatch s:code:2"
		if got := e.eventOrder(); got != want {
			t.Errorf("events %s, want %s", got, want)
		}
	})
	t.Run("prepare stages never overlap and commits keep submission order", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t))
		var preparing, peak atomic.Int64
		e.reg.OnPreExecute(func(ctx context.Context, c *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
			if c.Parent() != nil {
				n := preparing.Add(1)
				if n > peak.Load() {
					peak.Store(n)
				}
				time.Sleep(50 * time.Millisecond)
				preparing.Add(-1)
			}
			return next()
		})
		var posts []string
		var mu sync.Mutex
		e.reg.OnPostExecute(func(ctx context.Context, c *pipeline.Call, r pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
			mu.Lock()
			posts = append(posts, c.CallID())
			mu.Unlock()
			return next()
		})
		e.run(context.Background(), "o", `await Promise.all([400, 10, 10].map(ms => tools.slow({ms})));`)
		if peak.Load() != 1 {
			t.Errorf("%d prepare stages overlapped", peak.Load())
		}
		if strings.Join(posts, ",") != "o:code:1,o:code:2,o:code:3,o" {
			t.Errorf("post-execute order %v", posts)
		}
		var settles []string
		for _, ev := range e.events() {
			if strings.HasPrefix(ev, session.KindCodeDispatch+" ") {
				settles = append(settles, ev)
			}
		}
		if len(settles) != 3 || !strings.Contains(settles[0], "o:code:1") || !strings.Contains(settles[2], "o:code:3") {
			t.Errorf("settle order %q", settles)
		}
	})
}

func TestSettlement(t *testing.T) {
	t.Run("a queued call is abandoned, an in-flight one settles before the outer result", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t))
		res := e.run(context.Background(), "s", `tools.block({}).catch(() => {}); tools.echo({}).catch(() => {});
const fs = await import("node:fs");
while (!fs.existsSync("block-entered")) await new Promise(r => setTimeout(r, 10));
return "returned";`)
		if res.IsError || res.Text() != "returned" {
			t.Fatalf("result %q", res.Text())
		}
		evs := e.events()
		if len(evs) != 2 || !strings.Contains(evs[1], `"subCallId":"s:code:1"`) || !strings.Contains(evs[1], `"isError":true`) {
			t.Errorf("events %q (the queued echo must have none)", evs)
		}
		time.Sleep(100 * time.Millisecond)
		if len(e.events()) != 2 {
			t.Errorf("an event was logged after the outer result: %q", e.events())
		}
	})
	t.Run("outer abort aborts the in-flight call", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t))
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() { <-e.entered; cancel(errors.New("the user pressed stop")) }()
		res := e.run(ctx, "a", `console.log("waiting"); await tools.block({});`)
		if !res.IsError || res.Text() != "Error: code run failed (abort): the user pressed stop\nCaptured output:\nwaiting" {
			t.Errorf("result %q", res.Text())
		}
		evs := e.events()
		if len(evs) != 2 || !strings.Contains(evs[1], `"isError":true`) {
			t.Errorf("events %q", evs)
		}
	})
	t.Run("run_code is not callable from a program", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t))
		if res := e.run(context.Background(), "r", `return [typeof tools.run_code, typeof tools.echo];`); res.Text() != "[\n  \"undefined\",\n  \"function\"\n]" {
			t.Errorf("%q", res.Text())
		}
	})
}

func TestContextsAndDispatchLog(t *testing.T) {
	t.Run("context messages are deferred in submission order and survive a failure", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t))
		res := e.run(context.Background(), "d", `await Promise.all([tools.defer({ctx: "first"}), tools.defer({ctx: "second"})]); throw new Error("later");`)
		want := []pipeline.ContextMessage{{Plugin: "defer", Texts: []string{"first"}}, {Plugin: "defer", Texts: []string{"second"}}}
		if !res.IsError || !cmp.Equal(res.ContextMessages, want) {
			t.Errorf("result %q context messages %+v, want %+v", res.Text(), res.ContextMessages, want)
		}
	})
	t.Run("a nested call's image is handed on as a tools-code-mode message of its blocks, before its own contexts", func(t *testing.T) {
		// oracle recording diff-code-read-image: run_code's read_image.
		e := newEnv(t, Config{}, realRuntime(t))
		res := e.run(context.Background(), "i", `const v = await tools.image({}); await tools.echo({a: 1}); try { await tools.image({fail: true}); } catch {} return v.path;`)
		want := []pipeline.ContextMessage{
			{Plugin: ImagePlugin, Texts: []string{}, Content: []pipeline.Block{pipeline.TextBlock("<path>p.png</path>"), pipeline.ImageBlock(json.RawMessage(`{"attachmentId":"sha256:1"}`))}},
			{Plugin: "defer", Texts: []string{"after image"}},
		}
		if res.IsError || res.Text() != "p.png" || !cmp.Equal(res.ContextMessages, want, cmpopts.EquateEmpty()) {
			t.Errorf("result %q context messages %+v, want %+v", res.Text(), res.ContextMessages, want)
		}
	})
	t.Run("a hook's context messages on nested calls reach the outer result, failed calls and a failed run included", func(t *testing.T) {
		// oracle recording code-edge: a PostToolUse hook's additionalContext
		// on a nested read (even one with invalid arguments) becomes a
		// hooks-claude-code message after run_code's result.
		e := newEnv(t, Config{}, realRuntime(t))
		e.reg.OnPostExecute(func(ctx context.Context, c *pipeline.Call, r pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
			d, err := next()
			if c.Parent() != nil {
				d.ContextMessages = append(d.ContextMessages, pipeline.ContextMessage{Plugin: "hooks-claude-code", Texts: []string{"after " + c.CallID()}})
			}
			return d, err
		})
		for _, tc := range []struct{ code, want string }{
			{`await tools.echo({a: 1}); try { await tools.fail({}); } catch {} return "ok";`, "after m:code:1,after m:code:2"},
			{`await tools.echo({a: 1}); throw new Error("later");`, "after m:code:1"},
		} {
			res := e.run(context.Background(), "m", tc.code)
			var got []string
			for _, m := range res.ContextMessages {
				if m.Plugin != "hooks-claude-code" {
					t.Errorf("plugin %q", m.Plugin)
				}
				got = append(got, m.Texts...)
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("%s: context messages %q, want %s", tc.code, got, tc.want)
			}
		}
	})
	t.Run("the dispatch-log arm replaces the logged content only", func(t *testing.T) {
		e := newEnv(t, Config{}, realRuntime(t), func(d *Deps) {
			d.DispatchLog = func(c *pipeline.Call, content []pipeline.Block) []pipeline.Block {
				if c.Name() == "fail" {
					panic("store down")
				}
				return []pipeline.Block{pipeline.TextBlock("[logged copy of " + c.CallID() + "]")}
			}
		})
		res := e.run(context.Background(), "l", `const v = await tools.echo({a: 1}); try { await tools.fail({}); } catch {} return v;`)
		evs := e.events()
		if res.Text() != "{\n  \"a\": 1\n}" || !strings.Contains(evs[1], `"text":"[logged copy of l:code:1]"`) || !strings.Contains(evs[3], `"text":"Error: cannot read`) {
			t.Errorf("text %q events %q", res.Text(), evs)
		}
		if len(e.warnings) != 1 || e.warnings[0] != "tools: code-dispatch-log listener failed for fail: store down; logging the original settled content" {
			t.Errorf("warnings %q", e.warnings)
		}
	})
}

func TestNoAgentNoEvents(t *testing.T) {
	e := newEnv(t, Config{}, realRuntime(t))
	res := e.reg.Execute(pipeline.NewCall("n", Name, args(`return await tools.echo({z: 1});`, "agentless"), nil, context.Background()))
	if res.Text() != "{\n  \"z\": 1\n}" || len(e.events()) != 0 {
		t.Errorf("%q %q", res.Text(), e.events())
	}
}

// countingRunner is a constructed runtime: it counts runs and returns a
// fixed result, optionally after the caller cancelled.
type countingRunner struct {
	runs      atomic.Int64
	waitAbort bool
}

func (c *countingRunner) Run(ctx context.Context, req noderuntime.Request) (noderuntime.Result, error) {
	c.runs.Add(1)
	if c.waitAbort {
		<-ctx.Done()
	}
	return noderuntime.Result{Logs: []string{}, Value: json.RawMessage(`"finished anyway"`)}, nil
}

func TestArgumentsRuntimeAndCancellation(t *testing.T) {
	rt := &countingRunner{}
	e := newEnv(t, Config{}, rt)
	cases := []struct {
		name string
		args string
		want string
		code string
	}{
		{"whitespace description", `{"code":"return 1","description":"  \n"}`, "Error: invalid description: expected a non-empty string", ""},
		{"missing code", `{"description":"x"}`, `Error: invalid arguments: missing required property "code"`, "INVALID_ARGS"},
		{"code not a string", `{"code":1,"description":2}`, `Error: invalid arguments: "code" must be a string; "description" must be a string`, "INVALID_ARGS"},
	}
	for _, c := range cases {
		res := e.reg.Execute(pipeline.NewCall("a", Name, json.RawMessage(c.args), e.agent, context.Background()))
		if res.Text() != c.want || (c.code != "" && (res.Error.Info == nil || res.Error.Info.Code != c.code)) {
			t.Errorf("%s: %q %+v", c.name, res.Text(), res.Error)
		}
	}
	if rt.runs.Load() != 0 {
		t.Errorf("the runtime ran for bad arguments")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := e.run(ctx, "b", "return 1"); res.Text() != "Error: tool call aborted before dispatch" || rt.runs.Load() != 0 {
		t.Errorf("pre-cancelled: %q, %d runs", res.Text(), rt.runs.Load())
	}
	rt.waitAbort = true
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if res := e.run(ctx, "c", "return 1"); res.Text() != "Error: tool call aborted" || res.Error.Info.Code != "ABORTED" {
		t.Errorf("cancelled, then the program succeeded: %q", res.Text())
	}
	missing := newEnv(t, Config{Mode: "both"}, nil)
	if res := missing.run(context.Background(), "m", "return 1"); res.Text() != `Error: dsh-tools: mode "both" requires a code runtime — load a ctx.codeRuntime implementation (e.g. @deepseek-ai/dsh-code-runtime-worker-thread) or set tools mode to "native"` {
		t.Errorf("missing runtime: %q", res.Text())
	}
	if _, err := build(Config{MaxParallelSubCalls: -1}, Deps{Registry: e.reg}); err == nil || err.Error() != "maxParallelSubCalls must be a positive integer" {
		t.Errorf("bad cap: %v", err)
	}
}

// TestSubCallNumbersFollowProgramOrder: the runtime hands calls over
// concurrently; the number a call was submitted with, not its arrival,
// names it and orders its start.
func TestSubCallNumbersFollowProgramOrder(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	outer := pipeline.NewCall("q", Name, args("", "x"), e.agent, context.Background())
	b := newBridge(outer, e.reg, context.Background(), 10, nil, e.tool.deps.Warn)
	second := make(chan error, 1)
	go func() {
		_, err := b.call(context.Background(), 2, "echo", json.RawMessage(`{"n":2}`))
		second <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if evs := e.events(); len(evs) != 0 {
		t.Fatalf("call 2 started before call 1 was submitted: %q", evs)
	}
	if err := waittest.Call(t, "call 1 to return", func() error {
		_, err := b.call(context.Background(), 1, "echo", json.RawMessage(`{"n":1}`))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := waittest.Recv(t, second, "call 2 to return"); err != nil {
		t.Fatal(err)
	}
	evs := e.events()
	if len(evs) != 4 || !strings.Contains(evs[0], `"subCallId":"q:code:1","name":"echo","arguments":{"n":1}`) {
		t.Errorf("events %q", evs)
	}
	b.drain(ReasonSettled)
	if _, err := b.call(context.Background(), 3, "echo", json.RawMessage(`{}`)); err == nil || err.Error() != "run_code run is over (run_code settled); echo not dispatched" {
		t.Errorf("a call after settlement: %v", err)
	}
}

// TestSettleWaitsForTheCallsOfItsTurn plants the scheduling behind the
// flaky order of code-nested-calls: the dispatch goroutine of a call issued
// together with another (Promise.all) runs late, after the first call
// committed. Upstream's host reads both calls before the first settles, so
// the second start is logged before the first settle event, whatever the
// scheduling of our goroutines.
func TestSettleWaitsForTheCallsOfItsTurn(t *testing.T) {
	testDispatchDelay = func(seq int64) {
		if seq == 2 {
			time.Sleep(400 * time.Millisecond) // mutate takes 100ms
		}
	}
	t.Cleanup(func() { testDispatchDelay = nil })
	e := newEnv(t, Config{}, realRuntime(t))
	e.run(context.Background(), "q", `await Promise.all([tools.mutate({}), tools.mutate({})]);`)
	want := "tool/code-dispatch-start q:code:1,tool/code-dispatch-start q:code:2,tool/code-dispatch q:code:1,tool/code-dispatch q:code:2"
	if got := e.eventOrder(); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// TestSettleWaitsForTheTurnToEnd plants the other half of that race: the
// host reads the second call of a turn late (after the first committed).
// Until the runtime reports the turn ended, the first call's settle waits,
// so the late call is queued and logs its start first.
func TestSettleWaitsForTheTurnToEnd(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	outer := pipeline.NewCall("q", Name, args("", "x"), e.agent, context.Background())
	b := newBridge(outer, e.reg, context.Background(), 10, nil, e.tool.deps.Warn)
	b.paced = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	dispatch := func(seq int64) {
		b.submit(noderuntime.Submission{ID: seq, Name: "mutate"})
		go func() { _, err := b.call(ctx, seq, "mutate", json.RawMessage(`{}`)); errs <- err }()
	}
	dispatch(1)
	time.Sleep(300 * time.Millisecond) // call 1 (100ms) has committed: the host reads call 2 late
	dispatch(2)
	b.turnEnded(2)
	for range 2 {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("the calls did not settle within 30s")
		}
	}
	want := "tool/code-dispatch-start q:code:1,tool/code-dispatch-start q:code:2,tool/code-dispatch q:code:1,tool/code-dispatch q:code:2"
	if got := e.eventOrder(); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	b.drain(ReasonSettled)
}

// TestSettlesFirst is the rule that orders a settle event and a later
// call's start: the later call waits for the settle only when the program
// worked longer than the tool ran, and longer than issueGrace, before
// issuing it.
func TestSettlesFirst(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		gap, took time.Duration
		want      bool
	}{
		{0, 0, false},                       // one Promise.all, a tool of no time
		{issueGrace - 1, 0, false},          // under the grace: at once
		{issueGrace, 0, true},               // the grace is inclusive
		{issueGrace, issueGrace, true},      // as long as the tool ran
		{issueGrace, issueGrace + 1, false}, // the tool still ran
		{400 * ms, 100 * ms, true},          // busy code between two calls
		{150 * ms, 600 * ms, false},         // a slower tool
		{-5 * ms, 0, false},                 // stamps out of order: at once
		{time.Duration(1 << 62), 0, true},   // no overflow
	}
	for _, c := range cases {
		if got := settlesFirst(c.gap, c.took); got != c.want {
			t.Errorf("settlesFirst(%v, %v) = %v, want %v", c.gap, c.took, got, c.want)
		}
	}
}

// TestACallIssuedAfterAToolCompletedStartsAfterItsSettle: the program
// works 400ms between two calls of one turn. Upstream's host reads the
// first call, runs it and logs its settle while the program still works, so
// the second call's start comes after that settle: for an exclusive tool
// (mutate, 100ms) and for a safe one (slow). When the tool runs longer than
// the program works, the second start comes first, as upstream's host read
// it before the tool completed.
func TestACallIssuedAfterAToolCompletedStartsAfterItsSettle(t *testing.T) {
	busy := func(ms int) string {
		// CPU time, not wall time: on a loaded machine a wall-clock loop
		// gets only a share of the CPU, and the stamps measure CPU
		return fmt.Sprintf("{ const { cpuUsage } = await import('node:process'); const c0 = cpuUsage(); for (;;) { const u = cpuUsage(c0); if (u.user + u.system >= %d) break; } }\n", ms*1000)
	}
	cases := []struct{ name, code, want string }{
		{"exclusive", "const p1 = tools.mutate({});\n" + busy(400) + "const p2 = tools.mutate({});\nawait Promise.all([p1, p2]);",
			"tool/code-dispatch-start b:code:1,tool/code-dispatch b:code:1,tool/code-dispatch-start b:code:2,tool/code-dispatch b:code:2"},
		{"safe", "const p1 = tools.slow({ms: 50});\n" + busy(400) + "const p2 = tools.slow({ms: 50});\nawait Promise.all([p1, p2]);",
			"tool/code-dispatch-start b:code:1,tool/code-dispatch b:code:1,tool/code-dispatch-start b:code:2,tool/code-dispatch b:code:2"},
		{"a tool slower than the work", "const p1 = tools.slow({ms: 1500});\n" + busy(100) + "const p2 = tools.mutate({});\nawait Promise.all([p1, p2]);",
			"tool/code-dispatch-start b:code:1,tool/code-dispatch-start b:code:2,tool/code-dispatch b:code:1,tool/code-dispatch b:code:2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, Config{}, realRuntime(t))
			if res := e.run(context.Background(), "b", c.code); res.IsError {
				t.Fatalf("run: %s", res.Text())
			}
			if got := e.eventOrder(); got != c.want {
				t.Errorf("events %s, want %s", got, c.want)
			}
		})
	}
}

// TestARefusedNestedCallRunsAlone: a call its schema refuses runs alone,
// as upstream's scheduler classifies it (oracle recording
// code-refused-nested-call): the third call, safe, starts only once the
// refused second one completed; with the three pooled, all three would
// start first.
func TestARefusedNestedCallRunsAlone(t *testing.T) {
	e := newEnv(t, Config{}, realRuntime(t))
	e.run(context.Background(), "r", `await Promise.all([tools.slow({ms: 300}), tools.slow({ms: "x"}).catch(() => {}), tools.slow({ms: 50})]);`)
	want := "tool/code-dispatch-start r:code:1,tool/code-dispatch-start r:code:2,tool/code-dispatch r:code:1,tool/code-dispatch-start r:code:3,tool/code-dispatch r:code:2,tool/code-dispatch r:code:3"
	if got := e.eventOrder(); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
}

// TestAnUnawaitedCallIsDispatchedBeforeTheRunSettles plants the scheduling
// behind the code-edge flake: the program issues a call it does not await
// and completes at once, and the call's dispatch goroutine runs late.
// Upstream's host starts and dispatches the call before it handles the
// completion, then aborts it: a start event, then "tool call aborted" (not
// "aborted before dispatch", and not no event at all).
func TestAnUnawaitedCallIsDispatchedBeforeTheRunSettles(t *testing.T) {
	testDispatchDelay = func(seq int64) {
		if seq == 1 {
			time.Sleep(300 * time.Millisecond)
		}
	}
	t.Cleanup(func() { testDispatchDelay = nil })
	e := newEnv(t, Config{}, realRuntime(t))
	res := e.run(context.Background(), "u", `tools.block({}); return "early";`)
	if res.Text() != "early" {
		t.Fatalf("result %q", res.Text())
	}
	evs := e.events()
	if len(evs) != 2 || !strings.HasPrefix(evs[0], session.KindCodeDispatchStart+" ") || !strings.Contains(evs[1], `"text":"Error: tool call aborted"`) {
		t.Errorf("events %q, want the start and a settle aborted after dispatch", evs)
	}
}

// TestAQueuedCallIsAbandonedWhateverTheDrainTiming: the run is over before
// its signal aborts the call in flight, so the exclusive call's abort, which
// frees the lane, never lets the queued call start, even when the drain runs
// late.
func TestAQueuedCallIsAbandonedWhateverTheDrainTiming(t *testing.T) {
	testBeforeDrain = func() { time.Sleep(300 * time.Millisecond) }
	t.Cleanup(func() { testBeforeDrain = nil })
	e := newEnv(t, Config{}, realRuntime(t))
	res := e.run(context.Background(), "s", `tools.block({}).catch(() => {}); tools.echo({}).catch(() => {});
const fs = await import("node:fs");
while (!fs.existsSync("block-entered")) await new Promise(r => setTimeout(r, 10));
return "returned";`)
	if res.Text() != "returned" {
		t.Fatalf("result %q", res.Text())
	}
	if evs := e.events(); len(evs) != 2 || !strings.Contains(evs[1], `"subCallId":"s:code:1"`) {
		t.Errorf("events %q (the queued echo must have none)", evs)
	}
}
