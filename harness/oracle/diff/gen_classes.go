package diff

import (
	"encoding/json"
	"fmt"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// The profiles below generate the classes of difference a hand-written
// review of upstream's code found and the other profiles did not: values at
// every crossing between Go and JavaScript, the forms of a call's argument
// text, hooks at every point (in children too), background children a
// run_code program starts, and fractional, large and infinite Retry-After.

// setupValues runs run_code with delegation: a program's values cross from
// Node to Go (its return value), from Node to a tool (nested arguments)
// and back from a workflow.
func setupValues(g *gen) {
	g.set.ToolsMode = pick(g, oracle.ToolsCode, oracle.ToolsBoth)
	g.set.Subagents = true
}

// jsValues are JavaScript expressions that JSON does not carry as they are
// (or only just): -0, NaN, ±Infinity, undefined, BigInt, lone surrogates,
// integers beyond 2^53, integer-like and __proto__ keys (their order), and
// the same nested in arrays and objects.
var jsValues = []string{
	"-0", "NaN", "Infinity", "-Infinity", "undefined", "10n", "2 ** 53 + 1", "9007199254740993",
	`"\ud800"`, `"a\udc00b"`, `"\ud83d\ude00"`, "1e21", "5e-324", "-1e-400", "0.1 + 0.2",
	`{b: 1, a: 2, 10: 3, 2: 4}`, `{["__proto__"]: 1, x: 2}`, `[1, , 3]`, `[-0, [NaN, {c: Infinity}]]`,
	`{a: undefined, b: [undefined], c: {d: -0}}`, `{x: {y: {z: 10n}}}`, `{toJSON() { return -0; }}`,
	`new Date(0)`, `[new Map(), new Set([1])]`, `Object.create(null)`, `{s: Symbol("s")}`, `() => 1`,
}

// moveValueReturn: a program returns a value built from jsValues.
func moveValueReturn(g *gen) {
	v := pick(g, jsValues...)
	if g.chance(0.4) {
		v = fmt.Sprintf("{k: %s, list: [%s, %s]}", v, pick(g, jsValues...), v)
	}
	g.call("run_code", o("code", "return "+v+";", "description", "A value"), AreaRunCode, AreaJSValues)
}

// valueArgs are nested calls whose arguments carry values JSON does not
// (a declared field, an undeclared key, nested; never a timeout: a tiny one races), each caught so that the
// program's value is the error's name and code.
var valueArgs = []string{
	`tools.read({file_path: "a.txt", offset: %s})`,
	`tools.read({file_path: "a.txt", extra: %s})`,
	`tools.write({file_path: "v.txt", content: "v\n", meta: {deep: [%s]}})`,
	`tools.bash({command: "echo hi", description: "d", extra: %s})`,
	`tools.job_list({filter: %s})`,
	`tools.read({file_path: %s})`,
}

// moveValueArgs: a program calls a tool with such a value.
func moveValueArgs(g *gen) {
	call := fmt.Sprintf(pick(g, valueArgs...), pick(g, jsValues...))
	code := "try {\n  const r = await " + call + ";\n  return [\"ok\", typeof r];\n} catch (e) {\n  return [e.name, e.code, e.message];\n}"
	g.call("run_code", o("code", code, "description", "A value as an argument"), AreaRunCode, AreaJSValues, AreaNestedCallsAwait)
}

// workflowValueBodies are workflow bodies whose values, thrown or
// returned, are not plain JSON (never an Error: its stack names where
// upstream is installed).
var workflowValueBodies = []string{
	"return %s",
	"return {result: %s, n: 1}",
	"throw {message: 'thrown object', extra: %s}",
	"throw {stack: 'a stack of its own'}",
	"throw {message: ''}",
	"throw null",
	"throw 'a thrown string'",
	"throw {message: 7}",
	"throw {get message() { throw 1 }}",
	"log('value: ' + JSON.stringify(%s)); return 1",
}

// workflowValues are the values a workflow may return or throw without
// failing inside upstream's engine (a value that is not plain JSON fails
// there with a stack that names where upstream is installed): -0 (the
// tool's output check refuses it), lone surrogates, integers beyond 2^53,
// key order, a prototype-less object.
var workflowValues = []string{
	"-0", "[-0]", "{a: {b: -0}}", `"\ud800"`, `"a\udc00b"`, "2 ** 53 + 1", "1e21", "5e-324",
	`{b: 1, a: 2, 10: 3, 2: 4}`, `{["__proto__"]: 1, x: 2}`, `Object.assign(Object.create(null), {z: 1})`, `[[], {}, ""]`,
}

// moveValueWorkflow: a workflow (top-level or from run_code) whose value
// is one of workflowValues; it starts no agent.
func moveValueWorkflow(g *gen) {
	body := pick(g, workflowValueBodies...)
	if n := countVerbs(body); n > 0 {
		body = fmt.Sprintf(body, pick(g, workflowValues...))
	}
	args := o("meta", o("name", "values", "description", "workflow values"), "script", body)
	g.mark(AreaWorkflow, AreaJSValues)
	if g.set.ToolsMode == oracle.ToolsBoth && g.chance(0.5) {
		g.call("workflow", args)
		return
	}
	code := "try {\n  const w = await tools.workflow(" + string(raw(args)) + ");\n  return w;\n} catch (e) {\n  return [e.name, e.code, e.message];\n}"
	g.call("run_code", o("code", code, "description", "A workflow's value"), AreaRunCode)
}

// countVerbs counts the %s of a body.
func countVerbs(s string) int {
	n := 0
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '%' && s[i+1] == 's' {
			n++
		}
	}
	return n
}

// argTexts are argument texts as a model may send them: empty, blank,
// not JSON, JSON that is not an object, numbers JSON.parse reads lossily
// or as -0 or ±Infinity, duplicate keys, a trailing comma.
var argTexts = []string{
	"", " ", "not json", "{", "[]", "[1]", "5", `"text"`, "null", "true",
	`{"file_path": "a.txt", "offset": -0}`, `{"file_path": "a.txt", "offset": 1e999}`, `{"file_path": "a.txt", "limit": -1e999}`,
	`{"file_path": "a.txt", "x": -0.0}`, `{"file_path": "a.txt", "offset": 9007199254740993}`, `{"file_path": "a.txt", "offset": 1e400}`,
	`{"file_path": "a.txt", "offset": 1.0}`, `{"file_path": "a.txt", "offset": 2E0}`, `{"file_path": "a.txt", "file_path": "sub/b.txt"}`,
	`{"file_path": "a.txt",}`, `{"file_path": "a.txt"} trailing`, `{"file_path": "a.txt", "limit": 1e-400}`,
	"{\"file_path\": \"a.txt\"}\n", `{"file_path": "\ud800"}`,
}

// moveArgText: one call whose arguments are one of argTexts.
func moveArgText(g *gen) {
	name := pick(g, "read", "read", "job_list", "bash", "write")
	g.rawCall(name, pick(g, argTexts...))
	g.mark(AreaArgText)
}

// rawCall adds a step whose one tool call carries text as its arguments,
// as raw chunks (a text that is not JSON cannot be a Call's arguments).
func (g *gen) rawCall(name, text string) {
	g.rawCalls++
	id := fmt.Sprintf("call_00_text%04d", g.rawCalls)
	g.steps = append(g.steps, oracle.Step{Chunks: []json.RawMessage{
		chunk(o("type", "block-start", "index", 0, "blockType", "tool-call")),
		chunk(o("type", "tool-call-delta", "index", 0, "id", id, "name", name, "argumentsDelta", text)),
		chunk(o("type", "block-end", "index", 0, "block", o("type", "tool-call", "id", id, "name", name, "arguments", text))),
		usageChunk(10), finishChunk("tool-calls"),
	}})
}

// setupLifecycle seeds hook configs with a handler at every point but
// Stop, SessionStart, SubagentStart and SubagentStop included, and delegates:
// the children run the session's hooks too.
func setupLifecycle(g *gen) {
	g.hooks = true
	g.set.Subagents = true
	for _, f := range g.hookFiles() {
		// no Stop handler: one that blocks steers the turn into a model
		// call the script does not have (the turns profile makes Stop
		// hooks with the calls they ask for)
		points := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}
		if f == "hooks.json" {
			points = append(points, "SubagentStart", "SubagentStop")
		}
		cfg := map[string][]hookEntry{}
		for _, ev := range points {
			if !g.chance(0.7) {
				continue
			}
			cmd := "cat > /dev/null; " + pick(g, "exit 0", "echo plain stdout", "echo soft failure >&2; exit 1", "exit 3")
			cfg[ev] = append(cfg[ev], hookEntry{Matcher: pick(g, lifecycleMatchers(ev)...), Hooks: []hookSpec{{Type: "command", Command: cmd}}})
		}
		b, err := json.MarshalIndent(map[string]any{"hooks": cfg}, "", "  ")
		if err != nil {
			panic("diff: marshal hooks: " + err.Error())
		}
		g.ws[f] = string(b) + "\n"
	}
	g.mark(AreaHooksClaude, AreaLifecycleHooks)
}

// lifecycleMatchers are the matchers a point's handler may have.
func lifecycleMatchers(point string) []string {
	switch point {
	case "SessionStart":
		return []string{"", "startup", "resume", "*"}
	case "SubagentStart", "SubagentStop":
		return []string{"", "general-purpose", "other", "*"}
	case "PreToolUse", "PostToolUse":
		return []string{"", "bash", "read", "*"}
	}
	return []string{""}
}

// moveLifecycleCall: a parent call, or a foreground delegation whose
// child runs a call or two under the same hooks.
func moveLifecycleCall(g *gen) {
	if g.chance(0.4) {
		g.call("bash", o("command", "echo PARENT", "description", "Parent command"), AreaBashForeground)
		return
	}
	n := g.newChild(0)
	g.call("subagent", o("description", "Hooked child", "prompt", "Run a command, then reply CHILD_DONE.", "run_in_background", false), AreaDelegation)
	steps := []oracle.Step{}
	if g.chance(0.7) {
		steps = append(steps, stepOf(pick(g, callOf("bash", o("command", "echo CHILD", "description", "Child command")), callOf("read", o("file_path", "a.txt")))))
	}
	g.setChild(n, append(steps, oracle.Step{Text: "CHILD_DONE"}))
}

// setupCodeChildren: run_code with delegation, children started in the
// background from a program.
func setupCodeChildren(g *gen) {
	g.set.ToolsMode = pick(g, oracle.ToolsCode, oracle.ToolsBoth)
	g.set.Subagents = true
}

// moveCodeChild: a program starts a background child and looks at it (the
// child answers at once, while the program awaits the start; a message to
// it would resume it for a turn its script lacks, so the controls go to an
// unknown agent), then the model waits in a foreground command for the
// settlement notice.
func moveCodeChild(g *gen) {
	if len(g.children) > 0 {
		// one child a case: the settlement notices of several children
		// reach upstream's parent at steps that vary from run to run
		moveValueReturn(g)
		return
	}
	// the child answers in text alone: one that runs a tool settles while
	// the parent works, at a step that varies in upstream's own runs
	n := g.newChild(0)
	g.setChild(n, []oracle.Step{{Text: fmt.Sprintf("CHILD_%d_DONE", n)}})
	look := pick(g,
		"const l = await tools.list_agents({});\nreturn {r, l};",
		"return r;",
		"const m = await tools.send_message({agent_id: 'no-such-agent', message: 'more'}).catch((e) => [e.name, e.code, e.message]);\nreturn {r, m};",
		"const i = await tools.interrupt_agent({agent_id: 'no-such-agent'}).catch((e) => [e.name, e.code, e.message]);\nreturn {r, i};",
	)
	code := fmt.Sprintf("const r = await tools.subagent({description: %q, prompt: %q, run_in_background: true});\n%s", "Child from code", "Reply CHILD_DONE.", look)
	g.call("run_code", o("code", code, "description", "Start a background child"), AreaRunCode, AreaCodeChildren, AreaDelegation)
	if g.set.ToolsMode == oracle.ToolsBoth {
		g.call("bash", o("command", "sleep 3", "description", "Let the child settle"), AreaBashForeground)
	} else {
		g.call("run_code", o("code", `await tools.bash({command: "sleep 3", description: "Let the child settle"}); return "waited";`, "description", "Wait"), AreaRunCode)
	}
}

// setupRetryAfter gives the provider a retry policy whose backoff is short
// (so the local delay is 1-4 ms) and whose cap is 100 ms.
func setupRetryAfter(g *gen) {
	g.set.Retry = `{"mode":"normal","maxRetries":2,"backoff":{"initialDelayMs":1,"maxDelayMs":100,"jitterRatio":0}}`
	g.mark(AreaRetry, AreaRetryAfter)
}

// retryAfters are providerRetryAfterMs values: fractions, zero, negative,
// at and over the policy's cap, huge, a string, null, and 1e999 (Infinity:
// upstream's log refuses the chunk, so it goes in replay.override.json).
var retryAfters = []string{"1.5", "0.25", "0.0001", "0", "-1", "100", "100.5", "1e6", "1e308", `"2"`, "null", "1e999"}

// moveRetryAfter: one prompt answered after one or two failures that
// carry a Retry-After, then a text; a failure the policy does not retry
// (a code it does not retry, a Retry-After over its cap, 1e999) is the
// turn's last call, and its prompt expects the error.
func moveRetryAfter(g *gen) {
	g.prompts++
	t := retryTurn{}
	for range 1 + g.r.IntN(2) {
		after := pick(g, retryAfters...)
		code := pick(g, "RATE_LIMIT", "RATE_LIMIT", "SERVER", "AUTH")
		t.chunks = append(t.chunks, usageChunk(0),
			json.RawMessage(`{"type": "finish", "reason": {"kind": "error", "failure": {"message": "failed", "code": "`+code+`", "providerRetryAfterMs": `+after+`}}}`))
		g.override = g.override || after == "1e999"
		if code == "AUTH" || !retriedAfter(after) {
			t.fails = true
			g.retryTurns = append(g.retryTurns, t)
			return
		}
	}
	text := fmt.Sprintf("Answer %d.", g.prompts)
	t.chunks = append(append(t.chunks, textChunks(0, text)...), usageChunk(2), finishChunk("stop"))
	g.retryTurns = append(g.retryTurns, t)
}

// retryTurn is one prompt's model calls, and whether its turn fails.
type retryTurn struct {
	chunks []json.RawMessage
	fails  bool
}

// retriedAfter says whether the case's policy (cap 100 ms) retries a
// failure carrying Retry-After after: a number over the cap is not (1e999
// fails the turn in the log before the policy sees it); no number (a
// string, null) or one not positive is the local backoff.
func retriedAfter(after string) bool {
	var f float64
	if after == "1e999" {
		return false
	}
	if json.Unmarshal([]byte(after), &f) != nil {
		return true
	}
	return f <= 100
}

// retryAfterScript lays the prompts out, each its own turn (a failing one
// expects its error: upstream's harness fails a scenario whose prompt
// fails unexpectedly). A case with 1e999 is played from
// replay.override.json, every model call of it.
func (g *gen) retryAfterScript() *oracle.Script {
	s := &oracle.Script{}
	var override []any
	for i, t := range g.retryTurns {
		var call []json.RawMessage
		for _, c := range t.chunks {
			call = append(call, c)
			var head struct{ Type string }
			if json.Unmarshal(c, &head) == nil && head.Type == "finish" {
				override = append(override, o("kind", "chunks", "chunks", call))
				call = nil
			}
		}
		s.Turns = append(s.Turns, []oracle.Step{{Chunks: t.chunks}})
		op := "prompt"
		if t.fails {
			op = "promptExpectError"
		}
		s.Steps = append(s.Steps, recording.Step{Op: op, Text: fmt.Sprintf("Prompt %d.", i+1)})
	}
	if g.override {
		s.Override = raw(override)
	}
	return s
}

// childrenScript is the moves' steps, then DONE, with the children's
// scripts (no first turn: in code mode the model calls run_code alone).
func (g *gen) childrenScript() *oracle.Script {
	g.steps = append(g.steps, oracle.Step{Text: "DONE"})
	return &oracle.Script{Prompts: []string{"Run the generated calls, then reply DONE."}, Turns: [][]oracle.Step{g.steps}, Children: g.children}
}
