package diff

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// Case is one generated model script with the switches of its run.
type Case struct {
	// Seed and Index make the case: Generate(Seed, Index) is the same case
	// on every machine.
	Seed  uint64
	Index int
	// Name is the scenario's name, gen-<seed>-<index>.
	Name     string
	Script   *oracle.Script
	Settings oracle.Settings
	// Profile is what the case is about; Areas are the spaces its calls
	// explore (see [Areas]).
	Profile string
	Areas   []string
}

// Area names what a generated call explores. Every area is generated (a
// test counts them over a few hundred cases).
const (
	AreaBashForeground   = "bash-foreground"
	AreaBashTimeout      = "bash-timeout"
	AreaBashArgs         = "bash-arguments"
	AreaBashBackground   = "bash-background"
	AreaSpawnFailure     = "background-spawn-failure"
	AreaJobTools         = "job-tools"
	AreaRead             = "read"
	AreaWrite            = "write"
	AreaEdit             = "edit"
	AreaFSFailure        = "fs-failure"
	AreaBOM              = "byte-order-mark"
	AreaEscalation       = "escalation"
	AreaApproval         = "approval-answers"
	AreaHooksClaude      = "hooks-claude-code"
	AreaHooksCodex       = "hooks-codex"
	AreaRunCode          = "run-code"
	AreaSessionRead      = "session-event-read"
	AreaSessionSearch    = "session-event-search"
	AreaSpillBound       = "spill-bound"
	AreaCancellation     = "cancellation"
	AreaParallel         = "parallel-calls"
	AreaSearchArgChecks  = "session-search-arguments"
	AreaTimeoutFraction  = "timeout-fraction"
	AreaNestedCallsAwait = "nested-calls"
	AreaMissingRunner    = "missing-sandbox-runner"
	AreaMultiPrompt      = "several-prompts"
	AreaMaxTokens        = "max-tokens"
	AreaErrorFinish      = "error-finish"
	AreaRetry            = "retry-policy"
	AreaEmptyReply       = "empty-reply"
	AreaPromptHooks      = "user-prompt-submit-hooks"
	AreaStopHooks        = "stop-hooks"
	AreaReminder         = "repeat-tool-reminder"
	AreaInstructions     = "agent-instructions"
	AreaTodo             = "todo-write"
	AreaFSSearch         = "glob-grep"
	AreaDelegation       = "delegation"
	AreaDelegationArgs   = "delegation-arguments"
	AreaFork             = "fork"
	AreaAgentControl     = "agent-controls"
	AreaDepth            = "delegation-depth"
	AreaChildTools       = "child-tools"
	AreaChildFailure     = "child-failure"
	AreaWorkflow         = "workflow"
	AreaJSValues         = "javascript-values"
	AreaArgText          = "argument-text"
	AreaLifecycleHooks   = "lifecycle-hooks"
	AreaCodeChildren     = "background-children-from-code"
	AreaRetryAfter       = "retry-after"
)

// Areas lists every area the generator explores.
var Areas = []string{
	AreaBashForeground, AreaBashTimeout, AreaBashArgs, AreaBashBackground, AreaSpawnFailure, AreaJobTools,
	AreaRead, AreaWrite, AreaEdit, AreaFSFailure, AreaBOM, AreaEscalation, AreaApproval, AreaHooksClaude,
	AreaHooksCodex, AreaRunCode, AreaSessionRead, AreaSessionSearch, AreaSpillBound, AreaCancellation,
	AreaParallel, AreaSearchArgChecks, AreaTimeoutFraction, AreaNestedCallsAwait, AreaMissingRunner,
	AreaMultiPrompt, AreaMaxTokens, AreaErrorFinish, AreaRetry, AreaEmptyReply, AreaPromptHooks, AreaStopHooks,
	AreaReminder, AreaInstructions, AreaTodo, AreaFSSearch,
	AreaDelegation, AreaDelegationArgs, AreaFork, AreaAgentControl, AreaDepth, AreaChildTools, AreaChildFailure,
	AreaWorkflow, AreaJSValues, AreaArgText, AreaLifecycleHooks, AreaCodeChildren, AreaRetryAfter,
}

// gen is the state of one case being generated.
type gen struct {
	r        *rand.Rand
	set      oracle.Settings
	areas    map[string]bool
	steps    []oracle.Step
	ws       map[string]string
	answers  []recording.Answer
	jobs     int  // background starts so far: job ids are bash-1, bash-2, ...
	hooks    bool // a hook config is seeded: calls stay one per step
	readable []string
	turns    *turnState     // the turns profile's prompts
	pinned   bool           // the search files' mtimes are pinned
	children []oracle.Child // child sessions' scripts, in the order they first call the model
	rawCalls int            // calls made of raw chunks: their ids are call_00_text0001, ...
	retryScript
}

// retryScript is the retry-after profile's prompts, their model calls, and
// whether one carries 1e999 (the script is then replay.override.json's).
type retryScript struct {
	prompts    int
	retryTurns []retryTurn
	override   bool
}

// profile generates the moves of one kind of case.
type profile struct {
	name  string
	setup func(g *gen)
	moves []func(g *gen)
	// script lays out the case's script when its moves do not make one
	// prompt's turn (nil: the moves' steps, then DONE).
	script func(g *gen) *oracle.Script
}

// Generate makes case index of seed: the same on every run. The profile,
// the switches and every call come from a PCG stream seeded with (seed,
// index), so a case can be made again alone.
func Generate(seed uint64, index int) *Case {
	r := rand.New(rand.NewPCG(seed, uint64(index)))
	g := &gen{r: r, areas: map[string]bool{}, ws: map[string]string{}}
	ps := profiles()
	p := ps[r.IntN(len(ps))]
	g.seedFiles()
	// Every case mounts the repeated-call reminder, as our stack composes it
	// (upstream's base profile mounts it; the oracle's overlay only with the
	// switch): any profile may repeat a call three times.
	g.set.Reminder = true
	p.setup(g)
	n := 2 + r.IntN(5)
	for range n {
		p.moves[r.IntN(len(p.moves))](g)
	}
	c := &Case{Seed: seed, Index: index, Name: fmt.Sprintf("gen-%d-%d", seed, index), Settings: g.set, Profile: p.name}
	if p.script != nil {
		c.Script = p.script(g)
	} else {
		g.steps = append(g.steps, oracle.Step{Text: "DONE"})
		c.Script = &oracle.Script{
			Prompts: []string{"Run the generated calls, then reply DONE."},
			Turns:   [][]oracle.Step{g.steps},
		}
	}
	c.Script.Workspace = g.ws
	c.Script.PermissionAnswers = g.answers
	for a := range g.areas {
		c.Areas = append(c.Areas, a)
	}
	sort.Strings(c.Areas)
	return c
}

// Profiles names the kinds of case, in the generator's order.
func Profiles() []string {
	var out []string
	for _, p := range profiles() {
		out = append(out, p.name)
	}
	return out
}

// profiles are the kinds of case, each with its settings and moves.
func profiles() []profile {
	plain := func(g *gen) {}
	return []profile{
		{"bash", plain, []func(*gen){moveBashOutput, moveBashOutput, moveBashTimeout, moveBashArgs, moveBashSignal, moveParallel}, nil},
		{"jobs", plain, []func(*gen){moveJobQuick, moveJobKill, moveJobSpawnFailure, moveJobQueries, moveBashOutput}, nil},
		{"fs", plain, []func(*gen){moveRead, moveRead, moveWrite, moveEdit, moveEdit, moveFSFailure, moveStale, moveParallel}, nil},
		{"bom", plain, []func(*gen){moveBOMRead, moveBOMEdit, moveBOMWrite, moveRead}, nil},
		{"escalation", setupConfined, []func(*gen){moveEscalateWrite, moveEscalateBash, moveEscalateEdit, moveConfinedWrite, moveRead}, nil},
		{"hooks", setupHooks, []func(*gen){moveHookedCall, moveHookedCall, moveHookedCall}, nil},
		{"code", setupCode, []func(*gen){moveCodeValue, moveCodeValue, moveCodeNested, moveCodeNested, moveCodeFailure}, nil},
		{"session-query", setupSessionQuery, []func(*gen){moveSessionRead, moveSessionSearch, moveSessionSearchArgs, moveSessionSearchArgs}, nil},
		{"spill", setupSpill, []func(*gen){moveSpillBash, moveSpillBash, moveSpillRead, moveSpillCode}, nil},
		{"cancel", plain, []func(*gen){moveBashOutput, moveRead, moveJobQuick}, (*gen).cancelScript},
		{"missing-runner", setupMissingRunner, []func(*gen){moveRunnerForeground, moveRunnerBackground, moveRunnerBackground, moveEscalateBash, moveRead}, nil},
		{"subagents", setupSubagents, []func(*gen){moveDelegate, moveDelegate, moveDelegatePair, moveDelegateArgs, moveAgentControl, moveDelegateDeep, moveWorkflow, moveWorkflow}, (*gen).subagentScript},
		{"turns", setupTurns, []func(*gen){moveTurnText, moveTurnText, moveTurnEmpty, moveTurnMaxTokens, moveTurnError, moveTurnError}, (*gen).turnsScript},
		{"tools", setupTools, []func(*gen){moveRepeat, moveTodo, moveTodo, moveSearch, moveSearch, moveInstructions, moveInstructions}, nil},
		{"values", setupValues, []func(*gen){moveValueReturn, moveValueArgs, moveValueWorkflow}, (*gen).childrenScript},
		{"argtext", plain, []func(*gen){moveArgText, moveArgText, moveRead}, nil},
		{"lifecycle", setupLifecycle, []func(*gen){moveLifecycleCall, moveLifecycleCall}, (*gen).subagentScript},
		{"code-children", setupCodeChildren, []func(*gen){moveCodeChild}, (*gen).childrenScript},
		{"retry-after", setupRetryAfter, []func(*gen){moveRetryAfter}, (*gen).retryAfterScript},
	}
}

// call adds one step with one call and marks its areas.
func (g *gen) call(name string, args any, areas ...string) {
	g.steps = append(g.steps, oracle.Step{Calls: []oracle.Call{{Name: name, Args: raw(args)}}})
	g.mark(areas...)
}

func (g *gen) mark(areas ...string) {
	for _, a := range areas {
		g.areas[a] = true
	}
}

// pick returns one of xs.
func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

// chance is true with probability p.
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// raw marshals v with its keys in the order written (obj keeps order).
func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("diff: marshal generated arguments: " + err.Error())
	}
	return b
}

// obj is a JSON object whose keys keep the order they were added in.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes the keys in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// o builds an obj from alternating keys and values.
func o(pairs ...any) obj {
	var out obj
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, kv{pairs[i].(string), pairs[i+1]})
	}
	return out
}

// seedFiles seeds the workspace every case starts from.
func (g *gen) seedFiles() {
	g.ws["a.txt"] = "alpha\nbeta\ngamma\n"
	g.ws["sub/b.txt"] = "in sub\n"
	g.readable = []string{"a.txt", "sub/b.txt"}
}

// file seeds a workspace file and returns its name.
func (g *gen) file(name, content string) string {
	if _, ok := g.ws[name]; !ok {
		g.readable = append(g.readable, name)
	}
	g.ws[name] = content
	return name
}
