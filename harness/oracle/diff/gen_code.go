package diff

import (
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/pipeline/session"
)

// setupCode runs the case in code mode (run_code alone) or both mode.
func setupCode(g *gen) {
	g.set.ToolsMode = pick(g, oracle.ToolsCode, oracle.ToolsCode, oracle.ToolsBoth)
	if g.chance(0.25) {
		g.set.Mode = oracle.WorkspaceWrite
	}
}

// codeValues are programs whose value (or failure) the model gets back:
// JSON and non-JSON values, logs, throws that carry no stack, a syntax
// error, TypeScript. Not the names of the nested tools: they are the
// overlay's composition (reconstructed), not behaviour.
var codeValues = []string{
	"return 1 + 1;",
	`return "text";`,
	"return {a: 1, b: [1, 2], c: {d: null}};",
	"return;",
	"return null;",
	"return [undefined, 1];",
	"return undefined;",
	"return NaN;",
	"return -0;",
	"return Infinity;",
	"return 10n;",
	"return new Date(0);",
	"return {toJSON() { return 5; }};",
	"return new Map([[1, 2]]);",
	`return "é€😀";`,
	"return true;",
	`console.log("log", 1, {b: 2}); console.error("err line"); return 3;`,
	`console.log("only logs");`,
	`console.log(undefined, null, [1, [2, [3]]]);`,
	`throw "a string";`,
	"throw {code: 7};",
	"return (;",
	"const x: number = 41; return x + 1;",
	"interface P { a: number } const p: P = {a: 1}; return p;",
	`return "x".repeat(3000);`,
	"await new Promise((r) => setTimeout(r, 50)); return 'waited';",
	`return typeof tools;`,
}

// moveCodeValue: a program that calls no tool.
func moveCodeValue(g *gen) {
	g.call("run_code", o("code", pick(g, codeValues...), "description", "Generated program"), AreaRunCode)
}

// nestedCalls are awaited nested tool calls, one after another (a nested
// call left unawaited, or concurrent nested reads, race upstream).
var nestedCalls = []string{
	`const b = await tools.bash({command: "echo nested", description: "d"}); return b;`,
	`const b = await tools.bash({command: "echo e >&2; exit 5", description: "d"}); return [b.exitCode, b.stdout, b.stderr];`,
	`const b = await tools.bash({command: "sleep 1.5", description: "d", timeoutMs: %s}); return [b.timedOut, b.timeoutMs, b.signal];`,
	`const r = await tools.read({file_path: "a.txt"}); return r;`,
	`const r = await tools.read({file_path: "a.txt", offset: 2, limit: 1}); return r.lines;`,
	`const w = await tools.write({file_path: "code.txt", content: "from code\n"}); const r = await tools.read({file_path: "code.txt"}); return [w, r];`,
	`await tools.read({file_path: "a.txt"}); const e = await tools.edit({file_path: "a.txt", old_string: "beta", new_string: "BETA"}); return e;`,
	`try { await tools.read({file_path: "missing.txt"}); } catch (e) { return [e.name, e.message, e.code]; }`,
	`try { await tools.edit({file_path: "a.txt", old_string: "zzz", new_string: "y"}); } catch (e) { return [e.name, e.code]; }`,
	`try { await tools.bash({description: "no command"}); } catch (e) { return [e.name, e.message]; }`,
	`const a = await tools.bash({command: "echo one", description: "d"}); const b = await tools.bash({command: "echo two", description: "d"}); return [a.stdout.text, b.stdout.text];`,
	`const r = await tools.bash({command: "printf 'caf\\xe9'", description: "d"}); return r.stdout;`,
	`const w = await tools.write({file_path: "/tmp/dshgen-code.txt", content: "x"}); return w.operation;`,
	`try { await tools.write({file_path: "/tmp/dshgen-code.txt", content: "x", sandbox_permissions: "danger-full-access", justification: "code asks"}); return "written"; } catch (e) { return [e.name, e.code]; }`,
	`const r = await tools.read({file_path: "a.txt"}); console.log(r.totalLines); return r.lines.length;`,
}

// moveCodeNested: a program with awaited nested calls.
func moveCodeNested(g *gen) {
	code := pick(g, nestedCalls...)
	if strings.Contains(code, "%s") {
		t := pick(g, "0.5", "300", "1.5", "0")
		code = fmt.Sprintf(code, t)
		if strings.Contains(t, ".") {
			g.mark(AreaTimeoutFraction)
		}
	}
	if strings.Contains(code, "sandbox_permissions") {
		if g.set.Mode == "" {
			// escalating to the current mode is a named departure
			code = nestedCalls[0]
		} else {
			g.answer()
		}
	}
	if !strings.HasPrefix(code, "try") {
		// an uncaught failure's stack names upstream's install path
		code = "try {\n" + code + "\n} catch (e) { return [\"caught\", e.name, e.code ?? null, e.message]; }"
	}
	g.call("run_code", o("code", code, "description", "Nested calls"), AreaRunCode, AreaNestedCallsAwait)
}

// moveCodeFailure: run_code's own argument checks.
func moveCodeFailure(g *gen) {
	variants := []obj{
		o("code", "return 1;"),
		o("description", "No code"),
		o("code", "", "description", "Empty program"),
		o("code", 5, "description", "Number program"),
		o("code", "return 1;", "description", "Extra", "timeout", 5),
	}
	g.call("run_code", pick(g, variants...), AreaRunCode)
}

// setupSessionQuery mounts the session-query tools; a marker is printed
// first so that searches have something to find.
func setupSessionQuery(g *gen) {
	g.set.SessionQuery = true
	g.call("bash", o("command", "echo MARKER_QZX", "description", "Print marker"), AreaBashForeground)
}

// moveSessionRead reads events by seq with windows (the request header's
// seq 7 holds the tool schemas, which differ by construction: not read).
func moveSessionRead(g *gen) {
	seq := pick[any](g, 0, 1, 2, 3, 4, 5, 9, 12, 15, 99999, -1, 1.5, "3", nil, 9007199254740992)
	args := o()
	if seq != nil {
		args = append(args, kv{"seq", seq})
	}
	for _, k := range []string{"before", "after"} {
		if g.chance(0.4) {
			args = append(args, kv{k, pick[any](g, 0, 1, 2, 50, 51, -1, 1.5, "2")})
		}
	}
	if g.chance(0.1) {
		args = append(args, kv{"session_id", pick(g, "00000000-0000-4000-8000-00000000beef", "", "not-a-session")})
	}
	g.call("session_event_read", args, AreaSessionRead)
}

// moveSessionSearch searches with hits and without.
func moveSessionSearch(g *gen) {
	q := pick(g, "MARKER_QZX", "NO_SUCH_TEXT", "marker_qzx", "MARKER", "Print marker", "echo", "\"quoted\"", "a AND b", "*", "ü", "MARKER_QZX OR x")
	g.call("session_event_search", o("query", q), AreaSessionSearch)
}

// moveSessionSearchArgs: session_event_search's argument checks.
func moveSessionSearchArgs(g *gen) {
	args := o("query", pick[any](g, "MARKER_QZX", "", "   ", 5, nil))
	if args[0].v == nil {
		args = o()
	}
	extras := []kv{
		{"seq_from", pick[any](g, 0, 5, -1, 1.5, "3", 100000, 9007199254740993)},
		{"seq_to", pick[any](g, 0, 3, -1, 2.5, "9", 100000)},
		{"time_from", pick[any](g, "2020-01-01T00:00:00Z", "2020-01-01", "not a time", "2999-01-01T00:00:00+00:00", 5, "")},
		{"time_to", pick[any](g, "2020-01-01T00:00:00Z", "2999-12-31T23:59:59.999Z", "yesterday", "2020-01-01T00:00:00")},
		{"event_types", pick[any](g, []string{session.KindToolResult}, []string{}, []string{"bogus"}, session.KindToolResult, []any{1})},
		{"surfaces", pick[any](g, []string{"current"}, []string{"bogus"}, []string{}, "current", []string{"log-only", "shadowed"})},
		{"session_id", pick[any](g, "00000000-0000-4000-8000-00000000dead", "", "x", 5)},
		{"limit", 5},
	}
	for _, e := range extras {
		if g.chance(0.3) {
			args = append(args, e)
		}
	}
	g.call("session_event_search", args, AreaSessionSearch, AreaSearchArgChecks)
}

// setupSpill mounts spill at 800 bytes (sometimes in code mode).
func setupSpill(g *gen) {
	g.set.Spill = true
	if g.chance(0.25) {
		g.set.ToolsMode = oracle.ToolsCode
	}
}

// spillSizes straddle the bound, in bytes.
var spillSizes = []int{780, 790, 799, 800, 801, 810, 1600, 5000}

// moveSpillBash: outputs around the bound, in one- to four-byte characters,
// on stdout, stderr or both, with an exit code. In code mode the command
// runs nested and its text is returned.
func moveSpillBash(g *gen) {
	n := pick(g, spillSizes...)
	char := pick(g, `a`, `\303\251`, `\342\202\254`, `\360\237\230\200`)
	width := map[string]int{`a`: 1, `\303\251`: 2, `\342\202\254`: 3, `\360\237\230\200`: 4}[char]
	cmd := fmt.Sprintf("printf 'p'; for i in $(seq 1 %d); do printf '%s'; done", (n-1)/width, char)
	cmd = pick(g, cmd, cmd+" >&2", cmd+"; echo; echo tail >&2", cmd+"; exit 4", fmt.Sprintf("seq 1 %d", n/4))
	if g.set.ToolsMode == oracle.ToolsCode {
		code := fmt.Sprintf("const b = await tools.bash({command: %q, description: \"d\"}); return b.stdout.text + b.stderr.text;", cmd)
		g.call("run_code", o("code", code, "description", "Nested output"), AreaRunCode, AreaSpillBound)
		return
	}
	g.call("bash", o("command", cmd, "description", "Output near the bound"), AreaSpillBound, AreaBashForeground)
}

// moveSpillRead: a read whose rendering straddles the bound.
func moveSpillRead(g *gen) {
	lines := pick(g, 10, 15, 16, 17, 40, 60)
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "line %03d %s\n", i, strings.Repeat("y", 40))
	}
	name := g.file("big.txt", b.String())
	if g.set.ToolsMode == oracle.ToolsCode {
		g.call("run_code", o("code", `const r = await tools.read({file_path: "big.txt"}); return r.lines.map((l) => l.text).join("\n");`, "description", "Read big"), AreaRunCode, AreaSpillBound)
		return
	}
	args := o("file_path", name)
	if g.chance(0.3) {
		args = append(args, kv{"limit", pick(g, 5, 16, 17)})
	}
	g.call("read", args, AreaRead, AreaSpillBound)
}

// moveSpillCode: a program's own value and logs around the bound.
func moveSpillCode(g *gen) {
	if g.set.ToolsMode != oracle.ToolsCode {
		moveSpillBash(g)
		return
	}
	n := pick(g, spillSizes...)
	code := pick(g,
		fmt.Sprintf(`return "v".repeat(%d);`, n),
		fmt.Sprintf(`console.log("l".repeat(%d)); return 1;`, n),
		fmt.Sprintf(`return "é".repeat(%d);`, n/2))
	g.call("run_code", o("code", code, "description", "Value near the bound"), AreaRunCode, AreaSpillBound)
}
