package noderuntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/procfs"
)

func newRuntime(t testing.TB, cfg Config) *Runtime {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// unconfined is a danger-full-access run in a fresh workspace.
func unconfined(t testing.TB, code string) Request {
	return Request{Code: code, Policy: sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: t.TempDir()}}
}

// runDeadline bounds a test's run, far above the 60 s wall ceilings some
// tests set: a run that a broken limit or abort leaves running fails its
// test.
const runDeadline = 2 * time.Minute

// runWithin is r.Run, failing t when the run has not returned within
// runDeadline.
func runWithin(t testing.TB, r *Runtime, ctx context.Context, req Request) (Result, error) {
	t.Helper()
	var res Result
	var err error
	waittest.Within(t, runDeadline, "the run to return", func() { res, err = r.Run(ctx, req) })
	return res, err
}

func mustRun(t testing.TB, r *Runtime, req Request) Result {
	t.Helper()
	res, err := runWithin(t, r, context.Background(), req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func failureOf(res Result) string {
	if res.Error == nil {
		return ""
	}
	return res.Error.Kind + ": " + res.Error.Message
}

func TestProgramOutcomes(t *testing.T) {
	r := newRuntime(t, Config{})
	cases := []struct {
		name, code string
		value      string // "" = no value
		logs       []string
		failure    string // "<kind>: <message>" or a prefix ending in "…"
	}{
		{name: "erasable TypeScript, logs in order incl. raw writes",
			code:  "type P = {x: number, y: number};\nconst p: P = {x: 1, y: 2};\nconsole.log('point', p);\nprocess.stdout.write('raw-out\\n');\nconsole.warn('careful');\nreturn p;",
			value: `{"x":1,"y":2}`, logs: []string{"point { x: 1, y: 2 }", "raw-out\n", "careful"}},
		{name: "console methods and stderr writes are one ledger", code: "console.error('e'); console.info('i'); console.debug('d'); process.stderr.write('w'); console.log(1, 'a', [1]);",
			logs: []string{"e", "i", "d", "w", "1 a [ 1 ]"}},
		{name: "no return gives no value", code: "const a = 1;", logs: []string{}},
		{name: "return undefined gives no value", code: "return undefined;", logs: []string{}},
		{name: "null is a value", code: "return null;", value: "null", logs: []string{}},
		{name: "key order of the program's object", code: "return {b: 1, a: 2, 10: 'x', 2: 'y'};", value: `{"2":"y","10":"x","b":1,"a":2}`, logs: []string{}},
		{name: "enum fails before anything is spawned", code: "enum E { A }\nreturn E.A;", logs: []string{},
			failure: "exception: TypeScript enum is not supported in strip-only mode"},
		{name: "throw Error keeps the stack", code: "console.log('before');\nthrow new Error('boom');", logs: []string{"before"}, failure: "exception: Error: boom\n    at …"},
		{name: "throw a string", code: "throw 'xy';", logs: []string{}, failure: "exception: xy"},
		{name: "throw an unrenderable value", code: "throw {toString() { throw 1; }};", logs: []string{}, failure: "exception: program threw an unrenderable value"},
		{name: "JS syntax error surviving the compile", code: "}\nfoo();\nasync function x() {", logs: []string{}, failure: "exception: SyntaxError: …"},
		{name: "lossy completion: undefined member", code: "return {a: undefined};", logs: []string{}, failure: "invalid-output: program completion must be lossless JSON"},
		{name: "lossy completion: NaN", code: "return NaN;", logs: []string{}, failure: "invalid-output: program completion must be lossless JSON"},
		{name: "lossy completion: -0", code: "return [-0];", logs: []string{}, failure: "invalid-output: program completion must be lossless JSON"},
		{name: "lossy completion: Date", code: "return new Date(0);", logs: []string{}, failure: "invalid-output: program completion must be lossless JSON"},
		{name: "lossy completion: Map", code: "return new Map();", logs: []string{}, failure: "invalid-output: program completion must be lossless JSON"},
		{name: "lossy completion: cycle", code: "const a: any = {}; a.self = a; return a;", logs: []string{}, failure: "invalid-output: program completion must be lossless JSON"},
		{name: "lossy completion: sparse array", code: "return [1, , 2];", logs: []string{}, failure: "invalid-output: program completion must be lossless JSON"},
		{name: "shared references are lossless", code: "const s = {k: 1}; return [s, s];", value: `[{"k":1},{"k":1}]`, logs: []string{}},
		{name: "null-prototype object is lossless", code: "const o = Object.create(null); o.a = 1; return o;", value: `{"a":1}`, logs: []string{}},
		{name: "empty environment, no CommonJS scope, no builtin-module globals", code: "return [JSON.stringify(process.env), typeof require, typeof module, typeof fs, typeof child_process, typeof process, typeof Buffer];",
			value: `["{}","undefined","undefined","undefined","undefined","object","function"]`, logs: []string{}},
		{name: "node modules through dynamic import", code: "const path = await import('node:path'); return path.join('a', 'b');", value: `"a/b"`, logs: []string{}},
		{name: "the heap cap is applied", code: "return process.execArgv.filter(a => a.startsWith('--max-old')).join();", value: `"--max-old-space-size=512"`, logs: []string{}},
		{name: "process.exit before completing", code: "console.log('bye'); process.exit(7);", logs: []string{"bye"}, failure: "worker-exit: worker exited with code 7 before completing"},
		{name: "uncaught asynchronous throw", code: "setTimeout(() => { throw new Error('late'); }, 0); await new Promise(r => setTimeout(r, 5000));", logs: []string{}, failure: "worker-exit: worker error: late"},
		{name: "native writes are entries after the others", code: "const fs = await import('node:fs'); fs.writeSync(1, 'native-out'); fs.writeSync(2, 'native-err'); console.log('port'); return 1;",
			value: "1", logs: []string{"port", "native-out", "native-err"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustRun(t, r, unconfined(t, c.code))
			got := failureOf(res)
			if strings.HasSuffix(c.failure, "…") {
				if !strings.HasPrefix(got, strings.TrimSuffix(c.failure, "…")) {
					t.Errorf("failure %q, want prefix %q", got, strings.TrimSuffix(c.failure, "…"))
				}
			} else if got != c.failure {
				t.Errorf("failure\n got: %q\nwant: %q", got, c.failure)
			}
			if string(res.Value) != c.value {
				t.Errorf("value %s, want %s", res.Value, c.value)
			}
			if !reflect.DeepEqual(res.Logs, c.logs) {
				t.Errorf("logs %q, want %q", res.Logs, c.logs)
			}
		})
	}
}

// fakeNode is a node wrapper that records each start in a marker file.
func fakeNode(t *testing.T) (path, marker string) {
	dir := t.TempDir()
	marker = filepath.Join(dir, "started")
	real, err := newRuntime(t, Config{}).Node(), error(nil)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "node")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho x >> "+marker+"\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, marker
}

func TestNothingIsSpawnedForACompileErrorOrAPreAbortedRun(t *testing.T) {
	node, marker := fakeNode(t)
	r := newRuntime(t, Config{Node: node})
	mustRun(t, r, unconfined(t, "return 1;"))
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the wrapper did not record a start: %v", err)
	}
	os.Remove(marker)
	res := mustRun(t, r, unconfined(t, "enum E { A }"))
	if res.Error == nil || res.Error.Kind != KindException {
		t.Errorf("enum: %+v", res.Error)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := runWithin(t, r, ctx, unconfined(t, "return 1;"))
	if err != nil || failureOf(res) != "abort: AbortError: This operation was aborted" {
		t.Errorf("pre-aborted: %+v %v", res, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("node was started for a program that does not compile or a pre-aborted run")
	}
}

func TestToolCalls(t *testing.T) {
	r := newRuntime(t, Config{})
	var calls atomic.Int64
	call := func(ctx context.Context, _ int64, name string, args json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		switch name {
		case "fail":
			return nil, errors.New(`cannot read "/x": not found`)
		case "nothing":
			return nil, nil
		}
		return args, nil
	}
	cases := []struct {
		name, code, value string
		calls             int64
	}{
		{"the value the tool returns", "return await tools.echo({a: [1, 'x'], b: null});", `{"a":[1,"x"],"b":null}`, 1},
		{"a tool without a value resolves null", "return await tools.nothing({});", `null`, 1},
		{"a failed call rejects with ToolCallError", "try { await tools.fail({}); } catch (e) { return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message]; }",
			`[true,true,"ToolCallError","fail","cannot read \"/x\": not found"]`, 1},
		{"exotic names through quoted access", `return await tools["my-tool"]({});`, `{}`, 1},
		{"__proto__ binds as an ordinary key", `return [typeof tools.__proto__, typeof tools.toString];`, `["function","undefined"]`, 0},
		{"deep arguments dispatch", "let v: any = 1; for (let i = 0; i < 5000; i++) v = [v]; const r: any = await tools.echo(v); let d = 0, x = r; while (Array.isArray(x)) { x = x[0]; d++; } return d;", `5000`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls.Store(0)
			req := unconfined(t, c.code)
			req.Names, req.Call = []string{"echo", "fail", "nothing", "my-tool", "__proto__"}, call
			res := mustRun(t, r, req)
			if res.Error != nil || string(res.Value) != c.value {
				t.Errorf("value %s error %v, want %s", res.Value, failureOf(res), c.value)
			}
			if calls.Load() != c.calls {
				t.Errorf("%d calls dispatched, want %d", calls.Load(), c.calls)
			}
		})
	}
	t.Run("uncaught ToolCallError fails the run with its stack", func(t *testing.T) {
		req := unconfined(t, "await tools.fail({});")
		req.Names, req.Call = []string{"fail"}, call
		res := mustRun(t, r, req)
		if !strings.HasPrefix(failureOf(res), "exception: ToolCallError: cannot read \"/x\": not found\n    at ") {
			t.Errorf("failure %q", failureOf(res))
		}
	})
	for _, lossy := range []string{"undefined", "{a: undefined}", "new Date(0)", "() => 1", "10n", "NaN", "-0", "[1, , 2]",
		"(() => { const a: any = {}; a.a = a; return a; })()", "{get x() { throw new Error('getter'); }}", "{get x() { return 1; }}", "new (class K {})()", "Object.assign([1], {extra: 1})"} {
		t.Run("lossy arguments "+lossy, func(t *testing.T) {
			calls.Store(0)
			req := unconfined(t, "try { await tools.echo("+lossy+"); return 'sent'; } catch (e) { return [e.name, e.toolName, e.message]; }")
			req.Names, req.Call = []string{"echo"}, call
			res := mustRun(t, r, req)
			if string(res.Value) != `["ToolCallError","echo","binding arguments must be lossless JSON"]` || calls.Load() != 0 {
				t.Errorf("value %s (%s), %d calls dispatched", res.Value, failureOf(res), calls.Load())
			}
		})
	}
	t.Run("a call without arguments", func(t *testing.T) {
		calls.Store(0)
		req := unconfined(t, "try { await (tools.echo as any)(); } catch (e) { return e.message; }")
		req.Names, req.Call = []string{"echo"}, call
		if res := mustRun(t, r, req); string(res.Value) != `"binding arguments must be lossless JSON"` || calls.Load() != 0 {
			t.Errorf("value %s, %d calls", res.Value, calls.Load())
		}
	})
}

func TestBudgets(t *testing.T) {
	// A wall ceiling far above what the busy budget and the slow binding
	// take even on a loaded machine (3s was reached first under a CPU hog:
	// 400ms of CPU time took longer than that).
	r := newRuntime(t, Config{ComputeMs: 400, MaxWallMs: 60000})
	slow := func(ctx context.Context, _ int64, name string, args json.RawMessage) (json.RawMessage, error) {
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-ctx.Done():
		}
		return json.RawMessage(`"late"`), nil
	}
	t.Run("a hot loop beside a pending call exhausts the compute budget", func(t *testing.T) {
		req := unconfined(t, "const p = tools.decoy({}); console.log('before the loop'); while (true) {}")
		req.Names, req.Call = []string{"decoy"}, slow
		res := mustRun(t, r, req)
		if failureOf(res) != "timeout: compute budget exhausted (400ms busy)" || !reflect.DeepEqual(res.Logs, []string{"before the loop"}) {
			t.Errorf("%q logs %q", failureOf(res), res.Logs)
		}
	})
	t.Run("awaiting a slow binding does not consume it", func(t *testing.T) {
		req := unconfined(t, "return await tools.decoy({});")
		req.Names, req.Call = []string{"decoy"}, slow
		if res := mustRun(t, r, req); res.Error != nil || string(res.Value) != `"late"` {
			t.Errorf("%s %q", res.Value, failureOf(res))
		}
	})
	t.Run("the wall ceiling ends an idle wait", func(t *testing.T) {
		r := newRuntime(t, Config{MaxWallMs: 600})
		res := mustRun(t, r, unconfined(t, "await new Promise(() => {});"))
		if failureOf(res) != "timeout: wall-clock ceiling reached (600ms)" {
			t.Errorf("%q", failureOf(res))
		}
	})
	t.Run("abort mid-run", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(300*time.Millisecond, func() { cancel(errors.New("the user stopped the turn")) })
		res, err := runWithin(t, r, ctx, unconfined(t, "console.log('started'); await new Promise(() => {});"))
		if err != nil || failureOf(res) != "abort: the user stopped the turn" {
			t.Errorf("%q %v", failureOf(res), err)
		}
	})
	t.Run("out of memory, and the runtime is still usable", func(t *testing.T) {
		r := newRuntime(t, Config{MaxOldGenerationSizeMb: 32})
		res := mustRun(t, r, unconfined(t, "const a: string[] = []; while (true) a.push('x'.repeat(1000) + a.length);"))
		if res.Error == nil || res.Error.Kind != KindWorkerExit {
			t.Errorf("OOM: %q", failureOf(res))
		}
		if res := mustRun(t, r, unconfined(t, "return 2;")); string(res.Value) != "2" {
			t.Errorf("after OOM: %s %q", res.Value, failureOf(res))
		}
	})
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{ComputeMs: -1}, "dsh-code-runtime-worker-thread: config.computeMs must be a positive number, got -1"},
		{Config{MaxWallMs: 2147483648}, "dsh-code-runtime-worker-thread: config.maxWallMs must be at most 2147483647 (Node clamps a longer setTimeout delay to 1ms), got 2147483648"},
		{Config{MaxOutputBytes: 3}, "dsh-code-runtime-worker-thread: config.maxOutputBytes must be a safe integer of at least 4, got 3"},
		{Config{MaxOutputBytes: 4.5}, "dsh-code-runtime-worker-thread: config.maxOutputBytes must be a safe integer of at least 4, got 4.5"},
		{Config{MaxOldGenerationSizeMb: -0.5}, "dsh-code-runtime-worker-thread: config.maxOldGenerationSizeMb must be a positive number, got -0.5"},
		{Config{Node: "/nonexistent/node"}, `dsh-code-runtime: the node executable "/nonexistent/node" is not usable`},
	}
	for _, c := range cases {
		_, err := New(c.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := New(Config{MaxWallMs: 2147483647, MaxOutputBytes: 4}); err != nil {
		t.Errorf("boundaries are valid: %v", err)
	}
}

func TestOutputLedger(t *testing.T) {
	cases := []struct {
		name        string
		max         float64
		code, value string
		logs        []string
		failure     string
	}{
		{"€ fits at 7", 7, "console.log('€');", "", []string{"€"}, ""},
		{"€ overflows at 6", 6, "console.log('€');", "", []string{}, "output-limit: ou"},
		{"logs and value exactly at the cap", 11, "console.log('a'); return 'abcd';", `"abcd"`, []string{"a"}, ""},
		{"logs and value one over", 10, "console.log('a'); return 'abcd';", "", []string{}, "output-limit: outer "},
		{"runaway logs keep the prefix that fits", 60, "for (let i = 0; ; i++) console.log('line ' + i);", "", []string{"line 0", "line 1", "line 2"}, "output-limit: outer output exceeded 60 bytes"},
		{"the last entry is cut to fit", 64, "for (let i = 0; ; i++) console.log('line ' + i);", "", []string{"line 0", "line 1", "line 2", "l"}, "output-limit: outer output exceeded 64 bytes"},
		{"a first oversized log keeps a prefix", 50, "console.log('x'.repeat(100));", "", []string{"xxxxxxxxxxxxxx"}, "output-limit: outer output exceeded 50 bytes"},
		{"a giant failure message is an output-limit", 100, "throw new Error('e'.repeat(1000));", "", []string{}, "output-limit: outer output exceeded 100 bytes"},
		{"native writes are counted", 50, "const fs = await import('node:fs'); fs.writeSync(1, 'n'.repeat(100)); await new Promise(r => setTimeout(r, 2000));", "", []string{}, "output-limit: outer output exceeded 50 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRuntime(t, Config{MaxOutputBytes: c.max})
			res := mustRun(t, r, unconfined(t, c.code))
			if failureOf(res) != c.failure || string(res.Value) != c.value || !reflect.DeepEqual(res.Logs, c.logs) {
				t.Errorf("failure %q value %s logs %q\nwant    %q value %s logs %q", failureOf(res), res.Value, res.Logs, c.failure, c.value, c.logs)
			}
		})
	}
}

// TestHostileChannelTraffic writes forged frames onto the channel from
// inside the program.
func TestHostileChannelTraffic(t *testing.T) {
	r := newRuntime(t, Config{})
	frameJS := "const fs = await import('node:fs'); const send = (o: any) => { const b = Buffer.from(JSON.stringify(o)); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); fs.writeSync(3, Buffer.concat([h, b])); };\n"
	var calls atomic.Int64
	cases := []struct{ name, code, failure, value string }{
		{"a forged call out of sequence", "send({type: 'call', id: 7, global: 'tools', name: 'echo', cpu: 0, args: {}}); await new Promise(r => setTimeout(r, 3000));", "protocol: invalid binding call identity", ""},
		{"a forged call of an undeclared binding", "send({type: 'call', id: 1, global: 'tools', name: 'rm', cpu: 0, args: {}}); await new Promise(r => setTimeout(r, 3000));", "protocol: program requested an undeclared binding", ""},
		{"a forged call without its CPU stamp", "send({type: 'call', id: 1, global: 'tools', name: 'echo', args: {}}); await new Promise(r => setTimeout(r, 3000));", "protocol: invalid control frame", ""},
		{"a forged call with a negative CPU stamp", "send({type: 'call', id: 1, global: 'tools', name: 'echo', cpu: -1, args: {}}); await new Promise(r => setTimeout(r, 3000));", "protocol: invalid control frame", ""},
		{"a forged done carrying value and error settles with the error", "send({type: 'done', value: 1, error: {kind: 'exception', message: 'forged'}}); await new Promise(r => setTimeout(r, 3000));", "exception: forged", ""},
		{"a forged done wins over the real one", "send({type: 'done', value: 'forged'}); return 'real';", "", `"forged"`},
		{"a forged turn past the last call", "send({type: 'turn', id: 1}); await new Promise(r => setTimeout(r, 3000));", "protocol: invalid control frame", ""},
		{"a forged turn without an id", "send({type: 'turn'}); await new Promise(r => setTimeout(r, 3000));", "protocol: invalid control frame", ""},
		{"an unknown message", "send({type: 'hello'}); await new Promise(r => setTimeout(r, 3000));", "protocol: unknown control message", ""},
		{"a junk frame", "fs.writeSync(3, Buffer.from([0, 0, 0, 2, 123, 123])); await new Promise(r => setTimeout(r, 3000));", "protocol: invalid control frame", ""},
		{"a 4 GiB length", "fs.writeSync(3, Buffer.from([255, 255, 255, 255, 1])); await new Promise(r => setTimeout(r, 3000));", "protocol: control frame exceeds 134217728 bytes or is empty", ""},
		{"an empty frame", "fs.writeSync(3, Buffer.from([0, 0, 0, 0])); await new Promise(r => setTimeout(r, 3000));", "protocol: control frame exceeds 134217728 bytes or is empty", ""},
		{"a frame on stdout is only output", "const b = Buffer.from(JSON.stringify({type: 'done', value: 'stdout'})); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); fs.writeSync(1, Buffer.concat([h, b])); return 'channel';", "", `"channel"`},
		{"a forged kind in done", "send({type: 'done', error: {kind: 'timeout', message: 'x'}}); await new Promise(r => setTimeout(r, 3000));", "protocol: invalid control frame", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := unconfined(t, frameJS+c.code)
			req.Names = []string{"echo"}
			req.Call = func(ctx context.Context, _ int64, name string, args json.RawMessage) (json.RawMessage, error) {
				calls.Add(1)
				return args, nil
			}
			res := mustRun(t, r, req)
			if failureOf(res) != c.failure || string(res.Value) != c.value {
				t.Errorf("failure %q value %s, want %q %s", failureOf(res), res.Value, c.failure, c.value)
			}
		})
	}
	if calls.Load() != 0 {
		t.Errorf("%d forged calls were dispatched", calls.Load())
	}
	t.Run("too many pending calls", func(t *testing.T) {
		r := newRuntime(t, Config{MaxPendingCalls: 3})
		req := unconfined(t, "await Promise.all([1, 2, 3, 4].map(() => tools.wait({})));")
		req.Names = []string{"wait"}
		req.Call = func(ctx context.Context, _ int64, name string, args json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		// A deadline of its own: without the limit, the four calls wait for
		// ever and the run ends only at this deadline (an abort), not a hang.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := runWithin(t, r, ctx, req)
		if ctx.Err() != nil {
			t.Fatalf("the run ended only at the test's deadline (%q): the pending-call limit did not stop it", failureOf(res))
		}
		if err != nil || failureOf(res) != "protocol: pending binding calls exceed configured limits" {
			t.Errorf("%q %v", failureOf(res), err)
		}
	})
}

func waitGone(pids []int) []int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, p := range pids {
			if procfs.Alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSettlementKillsDescendants starts processes from the program (one in
// its own session, as Node's detached spawn does) and checks from outside,
// after Run returned, that none is left.
func TestSettlementKillsDescendants(t *testing.T) {
	r := newRuntime(t, Config{MaxWallMs: 1500})
	for _, ending := range []string{"return 'done';", "await new Promise(() => {});"} {
		t.Run(ending, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pids")
			code := `const cp = await import('node:child_process'); const fs = await import('node:fs');
const a = cp.spawn('sleep', ['300'], {detached: true, stdio: 'ignore'});
const b = cp.spawn('sh', ['-c', 'sleep 300 & echo $! ; wait'], {stdio: ['ignore', 'pipe', 'ignore']});
const inner = await new Promise<string>(res => b.stdout.once('data', d => res(String(d).trim())));
fs.writeFileSync(` + "`" + pidFile + "`" + `, [process.pid, a.pid, b.pid, inner].join(' '));
` + ending
			res := mustRun(t, r, unconfined(t, code))
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatalf("the program did not record its processes (%q): %v", failureOf(res), err)
			}
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				p, err := strconv.Atoi(f)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, p)
			}
			if left := waitGone(pids); len(left) > 0 {
				for _, p := range left {
					syscall.Kill(p, syscall.SIGKILL)
				}
				t.Errorf("processes left running after the run settled: %v (of %v)", left, pids)
			}
		})
	}
}

// TestAChildThatStopsReadingCannotStallTheHost: a busy loop making calls
// never reads the replies; the host's loop must still end the run by its
// own limits (it queues replies instead of blocking on the socket).
func TestAChildThatStopsReadingCannotStallTheHost(t *testing.T) {
	r := newRuntime(t, Config{ComputeMs: 500, MaxPendingCalls: 1 << 20})
	req := unconfined(t, "for (let i = 0; ; i++) tools.big({i});")
	req.Names = []string{"big"}
	big := json.RawMessage(`"` + strings.Repeat("x", 60000) + `"`)
	req.Call = func(ctx context.Context, _ int64, name string, args json.RawMessage) (json.RawMessage, error) {
		return big, nil
	}
	done := make(chan Result, 1)
	go func() { done <- mustRun(t, r, req) }()
	select {
	case res := <-done:
		if res.Error == nil || (res.Error.Kind != KindTimeout && res.Error.Kind != KindProtocol) {
			t.Errorf("failure %q", failureOf(res))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end: the host's loop is stalled")
	}
}

type jsObjectReason struct{}

func (jsObjectReason) Error() string    { return "go text of the cause" }
func (jsObjectReason) JSString() string { return "[object Object]" }

// TestAbortReason: String(signal.reason) of a cancelled run: Node's default
// reasons, a JSReason's JSString (even wrapped), else the cause's text.
func TestAbortReason(t *testing.T) {
	cancelled := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	deadline, stop := context.WithTimeout(context.Background(), 0)
	defer stop()
	<-deadline.Done()
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"plain cancel", cancelled(nil), "AbortError: This operation was aborted"},
		{"deadline", deadline, "TimeoutError: The operation was aborted due to timeout"},
		{"a JS reason", cancelled(jsObjectReason{}), "[object Object]"},
		{"a wrapped JS reason", cancelled(fmt.Errorf("turn: %w", jsObjectReason{})), "[object Object]"},
		{"another cause", cancelled(errors.New("run_code run is over")), "run_code run is over"},
	}
	for _, tt := range tests {
		if got := AbortReason(tt.ctx); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestEarlyNativeOutputIsKept: output the child writes before the host's
// loop runs (a runner's immediate failure text, here a node wrapper that
// writes to stderr first) is kept whole. The caps were set by the loop, after
// the copy goroutines had started: early output was cut to one byte (and
// go test -race reported the race).
func TestEarlyNativeOutputIsKept(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node: %v", err)
	}
	const early = "wrapper: this line was written before the loop of the host ran"
	wrapper := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho '"+early+"' >&2\nexec '"+node+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	testAfterStart = func() {
		close(started)
		time.Sleep(300 * time.Millisecond) // the loop is scheduled late
	}
	t.Cleanup(func() { testAfterStart = nil })
	r := newRuntime(t, Config{Node: wrapper})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := runWithin(t, r, ctx, unconfined(t, "return 1;"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	default:
		t.Fatal("the seam did not run")
	}
	if got := strings.Join(res.Logs, "\n"); !strings.Contains(got, early) {
		t.Errorf("logs %q, want the early stderr line %q whole", res.Logs, early)
	}
}

// TestBusyBudgetExcludesStartUp: the compute budget counts the program's
// busy time after Node reported ready, not Node's own start-up (tens of
// milliseconds of CPU on the event-loop thread). A budget below the
// start-up cost lets an idle program complete.
func TestBusyBudgetExcludesStartUp(t *testing.T) {
	r := newRuntime(t, Config{ComputeMs: 15})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := runWithin(t, r, ctx, unconfined(t, "await new Promise((resolve) => setTimeout(resolve, 300)); return 1;"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil || string(res.Value) != "1" {
		t.Errorf("an idle program under a 15ms busy budget: %s (value %s), want 1", failureOf(res), res.Value)
	}
}

// busyCPU is program code that works until it used ms of CPU time (not of
// wall time: on a loaded machine a wall-clock loop gets a share of it).
func busyCPU(ms int) string {
	return fmt.Sprintf("{ const { cpuUsage } = await import('node:process'); const c0 = cpuUsage(); for (;;) { const u = cpuUsage(c0); if (u.user + u.system >= %d) break; } }\n", ms*1000)
}

// TestTheHostHearsOfCallsAndTurns: every call is submitted as it is read,
// stamped with the program's CPU time, and every turn that issued calls
// is reported with its last call, after all of them (a Promise.all's two
// calls, then a turn of one). Work between two calls shows in the stamps;
// the two calls of one Promise.all are well under the bridge's grace apart.
func TestTheHostHearsOfCallsAndTurns(t *testing.T) {
	r := newRuntime(t, Config{})
	req := unconfined(t, `await Promise.all([tools.echo({}), tools.echo({})]);
`+busyCPU(300)+`await tools.echo({});`)
	req.Names = []string{"echo"}
	var mu sync.Mutex
	var seen []string
	cpu := map[int64]time.Duration{}
	req.Submitted = func(s Submission) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("call %d %s", s.ID, s.Name))
		cpu[s.ID] = s.CPU
	}
	req.TurnEnded = func(id int64) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("turn %d", id))
	}
	req.Call = func(ctx context.Context, _ int64, name string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	}
	if res := mustRun(t, r, req); res.Error != nil {
		t.Fatalf("run: %s", failureOf(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, ", "); got != "call 1 echo, call 2 echo, turn 2, call 3 echo, turn 3" {
		t.Errorf("heard %s", got)
	}
	if gap := cpu[2] - cpu[1]; gap < 0 || gap >= 20*time.Millisecond {
		t.Errorf("the calls of one Promise.all are %v of CPU time apart", gap)
	}
	if gap := cpu[3] - cpu[2]; gap < 250*time.Millisecond {
		t.Errorf("300ms of work between two calls stamped %v apart", gap)
	}
}
