package diff

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/harness/oracle"
)

// The subagents profile delegates: foreground subagent and subagent_fork
// calls whose children run tools and answer, agent controls, workflows and
// depth limits. Upstream's llm-replay binds the n-th child script to the
// child that first calls the model n-th, so the generator keeps that order
// fixed:
//
//   - subagent always waits (run_in_background false, or a value the schema
//     refuses): a background child ends while the model works, and its
//     settlement notice comes when it comes;
//   - two delegations in one step start their children concurrently, so
//     either may call the model first: both get the same script, one text
//     step (our replay binds children by their task, so their logs compare
//     as a set whatever their numbering);
//   - the workflow engine runs one agent at a time (the overlay's
//     maxConcurrentAgents 1), so parallel() starts them in the order given;
//   - a child's script is reserved when it is created, before the scripts
//     of the children it starts itself.
//
// Child ids are upstream's random UUIDs, which a script cannot know: the
// agent controls are explored on ids no session has and on the arguments
// their schemas refuse.

// setupSubagents mounts delegation, sometimes with a depth cap of 2 (a
// grandchild runs, a great-grandchild is refused), sometimes under
// workspace-write (children are pinned to approval never). The repeated-call
// reminder, mounted in every case, is then every agent's.
func setupSubagents(g *gen) {
	g.set.Subagents = true
	if g.chance(0.3) {
		g.set.MaxDepth = pick(g, 2, 2, 3)
	}
	if g.chance(0.25) {
		g.set.Mode = oracle.WorkspaceWrite
	}
}

// maxDepth is the case's delegation depth cap.
func (g *gen) maxDepth() int { return max(g.set.MaxDepth, 1) }

// newChild reserves the next child script for a child of session parent
// (0 the primary, n the n-th child) and returns its number; its turns are
// filled in by setChild once its own steps (and children) are generated.
func (g *gen) newChild(parent int) int {
	g.children = append(g.children, oracle.Child{Parent: parent})
	return len(g.children)
}

func (g *gen) setChild(n int, steps []oracle.Step) {
	g.children[n-1].Turns = [][]oracle.Step{steps}
}

// depthOf is the delegation depth of session n (0 the primary).
func (g *gen) depthOf(n int) int {
	d := 0
	for n > 0 {
		n = g.children[n-1].Parent
		d++
	}
	return d
}

// subagentScript is the profile's script: sometimes a first turn that
// completes before the generated one (a fork then copies it as its seed).
func (g *gen) subagentScript() *oracle.Script {
	g.steps = append(g.steps, oracle.Step{Text: "DONE"})
	s := &oracle.Script{Prompts: []string{"Run the generated calls, then reply DONE."}, Turns: [][]oracle.Step{g.steps}}
	if g.chance(0.35) {
		first := []oracle.Step{{Text: "FIRST"}}
		if g.chance(0.5) {
			first = append([]oracle.Step{stepOf(callOf("bash", o("command", "echo first turn", "description", "First turn")))}, first...)
		}
		s.Prompts = []string{"Reply FIRST.", s.Prompts[0]}
		s.Turns = [][]oracle.Step{first, g.steps}
	}
	s.Children = g.children
	return s
}

// delegateArgs are a foreground delegation's arguments: subagent waits
// only with run_in_background false; subagent_fork has no such parameter
// and waits whatever it is given but true.
func (g *gen) delegateArgs(tool, desc, prompt string) obj {
	args := o("description", desc, "prompt", prompt)
	switch {
	case tool == "subagent":
		args = append(args, kv{"run_in_background", false})
	case g.chance(0.3):
		args = append(args, kv{"run_in_background", pick[any](g, false, false, "true", 1, nil)})
		g.mark(AreaDelegationArgs)
	}
	return args
}

// moveDelegate: one foreground subagent or subagent_fork call whose child
// runs tools and answers.
func moveDelegate(g *gen) {
	tool := pick(g, "subagent", "subagent", "subagent_fork")
	n := g.newChild(0)
	prompt := pick(g, "Run the generated calls, then answer.", "Do the task and report.", "Tâche: réponds 😀")
	desc := pick(g, "Generated task", "Child work", "x")
	g.call(tool, g.delegateArgs(tool, desc, prompt), AreaDelegation)
	if tool == "subagent_fork" {
		g.mark(AreaFork)
	}
	g.setChild(n, g.childSteps(n))
}

// moveDelegatePair: two delegations in one step. Both children start at
// once, so they share one text-only script; or one of the two is refused
// by its arguments and only the other starts.
func moveDelegatePair(g *gen) {
	g.mark(AreaDelegation, AreaParallel)
	first := pick(g, "subagent", "subagent_fork")
	second := pick(g, "subagent", "subagent_fork")
	a := callOf(first, g.delegateArgs(first, "First child", "Reply with the first answer."))
	if g.chance(0.3) {
		b := callOf(second, pick(g, o("description", "Refused"), o("description", "Refused", "prompt", 7),
			o("prompt", "no description", "run_in_background", false)))
		g.steps = append(g.steps, stepOf(pick(g, []oracle.Call{a, b}, []oracle.Call{b, a})...))
		n := g.newChild(0)
		g.setChild(n, g.childSteps(n))
		return
	}
	b := callOf(second, g.delegateArgs(second, "Second child", "Reply with the second answer."))
	if first == "subagent_fork" || second == "subagent_fork" {
		g.mark(AreaFork)
	}
	g.steps = append(g.steps, stepOf(a, b))
	answer := g.childEnd()
	for range 2 {
		g.setChild(g.newChild(0), []oracle.Step{answer})
	}
}

// moveDelegateArgs: delegation arguments the tools refuse before any
// child exists.
func moveDelegateArgs(g *gen) {
	variants := []struct {
		tool string
		args obj
	}{
		{"subagent", o()},
		{"subagent", o("description", "No prompt", "run_in_background", false)},
		{"subagent", o("prompt", "No description", "run_in_background", false)},
		{"subagent", o("description", 5, "prompt", "x", "run_in_background", false)},
		{"subagent", o("description", "Number prompt", "prompt", 7, "run_in_background", false)},
		{"subagent", o("description", "Wrong flag", "prompt", "x", "run_in_background", pick[any](g, "false", 0, "yes"))},
		{"subagent_fork", o("description", "Fork in background", "prompt", "x", "run_in_background", true)},
		{"subagent_fork", o("prompt", "Fork without description")},
	}
	v := pick(g, variants...)
	g.call(v.tool, v.args, AreaDelegation, AreaDelegationArgs)
}

// agentIDs are ids no session has, and values the schemas refuse. Not
// the script's own session ids (00000000-0000-4000-8000-<n>): a recording's
// child logs keep them, and our replay gives its children the recorded ids.
var agentIDs = []any{"22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333", "not-an-id", "", 5, nil}

// moveAgentControl: list_agents, interrupt_agent and send_message on ids
// no live agent has, with the arguments their schemas refuse.
func moveAgentControl(g *gen) {
	g.mark(AreaAgentControl)
	switch g.r.IntN(3) {
	case 0:
		g.call("list_agents", pick(g, o(), o("scope", "children"), o("scope", "descendants"), o("scope", pick[any](g, "everyone", "", 1)), o("extra", true)))
	case 1:
		args := o("agent_id", pick(g, agentIDs...))
		if g.chance(0.15) {
			args = o()
		}
		g.call("interrupt_agent", args)
	default:
		args := o("subagent_id", pick(g, agentIDs...), "message", pick[any](g, "Keep going.", "", 3))
		if g.chance(0.15) {
			args = pick(g, o("message", "no id"), o("subagent_id", "22222222-2222-4222-8222-222222222222"))
		}
		g.call("send_message", args)
	}
}

// moveDelegateDeep: a child that delegates in turn. Under the depth cap
// its grandchild runs (and may try once more, over the cap); at the cap
// the child's delegation is refused and no grandchild exists.
func moveDelegateDeep(g *gen) {
	g.mark(AreaDelegation, AreaDepth)
	n := g.newChild(0)
	g.call("subagent", o("description", "Level one", "prompt", "Delegate, then answer.", "run_in_background", false))
	g.setChild(n, g.delegatingSteps(n))
}

// delegatingSteps are the steps of child n that delegates once (one or
// two calls in its first step), then answers.
func (g *gen) delegatingSteps(n int) []oracle.Step {
	allowed := g.depthOf(n)+1 <= g.maxDepth()
	tool := pick(g, "subagent", "subagent", "subagent_fork")
	calls := []oracle.Call{callOf(tool, g.delegateArgs(tool, "Level "+itoa(g.depthOf(n)+1), "Answer from below."))}
	if !allowed && g.chance(0.5) { // both refused before any child exists
		other := map[string]string{"subagent": "subagent_fork", "subagent_fork": "subagent"}[tool]
		calls = append(calls, callOf(other, g.delegateArgs(other, "Also refused", "Never runs.")))
	}
	steps := []oracle.Step{stepOf(calls...)}
	if allowed {
		k := g.newChild(n)
		if g.chance(0.4) { // it tries again: a great-grandchild runs only under the cap
			g.setChild(k, g.delegatingSteps(k))
		} else {
			g.setChild(k, g.childSteps(k))
		}
	}
	return append(steps, oracle.Step{Text: fmt.Sprintf("LEVEL_%d_DONE", g.depthOf(n))})
}

// childSteps are child n's steps: zero to three tool calls, one per step
// (sometimes two reads in one step, one of them maybe refused by its
// schema), then its answer.
func (g *gen) childSteps(n int) []oracle.Step {
	var steps []oracle.Step
	for range g.r.IntN(4) {
		g.mark(AreaChildTools)
		if g.chance(0.15) {
			g.mark(AreaParallel)
			steps = append(steps, stepOf(callOf("read", o("file_path", "a.txt")), callOf("read", o("file_path", pick[any](g, "sub/b.txt", 5, "missing.txt")))))
			continue
		}
		steps = append(steps, stepOf(g.childCall(n)))
	}
	return append(steps, g.childEnd())
}

// childCall is one tool call of child n: commands and file calls that
// succeed or fail, and under workspace-write the denials and escalations
// the child's approval pin rejects (bash is not confined by the oracle's
// passthrough runner: its commands write nothing outside).
func (g *gen) childCall(n int) oracle.Call {
	calls := []oracle.Call{
		callOf("bash", o("command", pick(g, "echo CHILD_RAN", "echo err >&2; exit 3", "ls sub", "cat a.txt"), "description", "Child command")),
		callOf("read", o("file_path", pick(g, "a.txt", "sub/b.txt", "missing.txt", "sub"))),
		callOf("write", o("file_path", fmt.Sprintf("child-%d.txt", n), "content", "from child\n")),
		callOf("edit", o("file_path", "a.txt", "old_string", "beta", "new_string", "BETA")),
		callOf("list_agents", o()),
		// report is a continuable child's own tool: a waited-for child has none
		callOf("report", o("message", "progress")),
	}
	if g.set.Mode == oracle.WorkspaceWrite {
		g.mark(AreaEscalation)
		calls = append(calls,
			callOf("write", o("file_path", "/tmp/dshgen-child.txt", "content", "child\n")),
			callOf("write", o("file_path", "/tmp/dshgen-child.txt", "content", "child\n", "sandbox_permissions", oracle.DangerFullAccess, "justification", "the task asks for it")),
			callOf("bash", o("command", "echo escalated", "description", "Escalated in a child", "sandbox_permissions", oracle.DangerFullAccess, "justification", "the task asks for it")))
	}
	return pick(g, calls...)
}

// childEnd is a child's last reply: a text; two text blocks (joined
// without a separator); reasoning then text (the reasoning dropped); a
// reply cut at the token limit with partial text; or none at all.
func (g *gen) childEnd() oracle.Step {
	switch g.r.IntN(7) {
	case 0:
		return chunkStep("stop", "text", "first half, ", "text", "second half")
	case 1:
		return chunkStep("stop", "reasoning", "thinking about it", "text", "CHILD_REASONED")
	case 2:
		g.mark(AreaChildFailure)
		return chunkStep("max-tokens", "text", "a partial answer")
	case 3:
		g.mark(AreaChildFailure)
		return chunkStep("max-tokens")
	}
	return oracle.Step{Text: pick(g, "CHILD_DONE", "line one\nline two\n", "é€😀 done", "  spaced  ")}
}

// chunkStep is a reply of raw chunks: blocks given as (type, text) pairs,
// then usage and a finish of kind.
func chunkStep(kind string, blocks ...string) oracle.Step {
	var cs []json.RawMessage
	add := func(v any) { cs = append(cs, raw(v)) }
	for i := 0; i+1 < len(blocks); i += 2 {
		typ, text, idx := blocks[i], blocks[i+1], i/2
		delta := "text-delta"
		if typ == "reasoning" {
			delta = "reasoning-delta"
		}
		add(o("type", "block-start", "index", idx, "blockType", typ))
		add(o("type", delta, "index", idx, "text", text))
		add(o("type", "block-end", "index", idx, "block", o("type", typ, "text", text)))
	}
	add(o("type", "usage", "usage", o("inputTokens", 100, "outputTokens", 1, "cacheReadTokens", 0, "reasoningTokens", 0)))
	add(o("type", "finish", "reason", o("kind", kind)))
	return oracle.Step{Chunks: cs}
}

// workflowBody is a workflow script and the number of agents it starts.
type workflowBody struct {
	script string
	agents int
}

// workflowBodies use phase, log, args, agent with its options and
// parallel, return values JSON renders, and bodies that fail (a thrown
// string: a thrown Error's text, or a return value that is not JSON, is
// upstream's rendered stack, which names where upstream is installed).
var workflowBodies = []workflowBody{
	{"phase('Gather')\nlog('start')\nconst a = await agent('Summarise a.txt')\nreturn { a }", 1},
	{"const [a, b] = await parallel([() => agent('First task'), () => agent('Second task', { label: 'second', phase: 'Custom' })])\nreturn [a, b]", 2},
	{"phase('Long')\nconst a = await agent('A task whose first line is longer than forty-eight characters in all\\nsecond line')\nreturn a", 1},
	{"const a = await agent('Only one', { label: 'solo' })\nlog('got ' + a)\nreturn { len: a === null ? -1 : a.length, topic: args.topic }", 1},
	{"log('no agents')\nreturn { n: [1, 2.5, null, true], s: 'é€😀' }", 0},
	{"return args", 0},
	{"return", 0},
	{"throw 'boom'", 0},
	{"phase('One')\nconst a = await agent('First')\nphase('Two')\nconst b = await agent('Second')\nreturn `${a}|${b}`", 2},
	{"return ((", 0},
	// the default label: the prompt's first line, cut past 48 UTF-16 units
	// (47 and an ellipsis), an emoji's surrogate pair cut in two
	{"const a = await agent('" + strings.Repeat("x", 48) + "')\nreturn a", 1},
	{"const a = await agent('" + strings.Repeat("y", 49) + "')\nreturn a", 1},
	{"const a = await agent('" + strings.Repeat("😀", 30) + "')\nreturn a", 1},
	{"const a = await agent('" + strings.Repeat("é", 50) + "\\nrest')\nreturn a", 1},
	// the rendered value around its 50000-character clip
	{"return 'x'.repeat(49998)", 0},
	{"return 'x'.repeat(49999)", 0},
	{"return '😀'.repeat(25000)", 0},
}

// moveWorkflow: a workflow whose agents run child scripts, or one whose
// meta the tool refuses.
func moveWorkflow(g *gen) {
	g.mark(AreaWorkflow)
	w := pick(g, workflowBodies...)
	meta := o("name", "gen-flow", "description", "generated workflow")
	switch g.r.IntN(6) {
	case 0:
		meta = pick(g, o("name", "no-description"), o("description", "no name"), o("name", "extra", "description", "x", "extra", 1), o("name", 5, "description", "x"))
		w.agents = 0
	case 1:
		meta = append(meta, kv{"phases", []obj{o("title", "Gather"), o("title", "Two", "detail", "the second")}})
	}
	args := o("meta", meta, "script", w.script)
	if strings.Contains(w.script, "args") || g.chance(0.3) {
		args = append(args, kv{"args", o("topic", pick[any](g, "t", 1, nil))})
	}
	g.call("workflow", args)
	for range w.agents {
		n := g.newChild(0)
		g.setChild(n, g.childSteps(n))
	}
}
