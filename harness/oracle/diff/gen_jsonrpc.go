package diff

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/dshsim/dshsim/harness/oracle"
)

// JSONRPCProfile is the profile of the cases run through upstream's
// JSON-RPC SDK front end (the published SDK client and server) instead of
// the ACP agent: [GenerateJSONRPC] makes them, [Checker.Frontend] runs them.
const JSONRPCProfile = "jsonrpc"

// Areas only the JSON-RPC profile explores.
const (
	AreaNoBoundary     = "no-sandbox-no-approval"
	AreaPersistentBash = "persistent-bash"
	AreaEditor         = "str-replace-editor"
)

// jsonrpcMoves are the default composition's calls: bash with no sandbox
// and no approval (a write outside the workspace runs), the file tools,
// one-shot delegation.
var jsonrpcMoves = []func(*gen){moveSDKBash, moveRead, moveWrite, moveEdit, moveFSFailure, moveOutsideWrite, moveOneShotChild}

// minimalMoves are the minimal composition's calls: the persistent bash
// and the editor.
var minimalMoves = []func(*gen){movePersistentBash, movePersistentBash, moveEditor, moveEditor, moveEditor}

// GenerateJSONRPC makes JSON-RPC case index of seed, gen-jsonrpc-<seed>-<index>,
// from its own PCG stream: one prompt over the SDK, two to six moves, then
// DONE. Two cases in three run in the example's default composition; the
// rest in the minimal one (every such case calls str_replace_editor, which
// is how [oracle.Oracle.RecordJSONRPC] chooses it). No overlay switch: the
// SDK's compositions are their own.
func GenerateJSONRPC(seed uint64, index int) *Case {
	r := rand.New(rand.NewPCG(seed^0x6a73_6f6e_7270_63, uint64(index)))
	g := &gen{r: r, areas: map[string]bool{}, ws: map[string]string{}}
	g.seedFiles()
	moves := jsonrpcMoves
	minimal := r.IntN(3) == 0
	if minimal {
		moves = minimalMoves
		moveEditor(g) // the composition is chosen by the editor's presence
	} else {
		g.mark(AreaNoBoundary)
	}
	for range 2 + r.IntN(5) {
		pick(g, moves...)(g)
	}
	g.steps = append(g.steps, oracle.Step{Text: "DONE"})
	c := &Case{Seed: seed, Index: index, Name: fmt.Sprintf("gen-jsonrpc-%d-%d", seed, index), Profile: JSONRPCProfile,
		Script: &oracle.Script{Prompts: []string{"Run the generated calls, then reply DONE."}, Turns: [][]oracle.Step{g.steps},
			Workspace: g.ws, Children: g.children}}
	for a := range g.areas {
		c.Areas = append(c.Areas, a)
	}
	sort.Strings(c.Areas)
	return c
}

// sdkBashOutputs are the bash palette's commands whose output the default
// composition keeps whole: it mounts no output retention, so an output
// over the executor's cap names a full-output file whose path is random
// upstream (a case with one is never reproduced).
var sdkBashOutputs = func() []string {
	var out []string
	for _, c := range bashOutputs {
		if !strings.HasPrefix(c, "head -c 64") {
			out = append(out, c)
		}
	}
	return out
}()

// moveSDKBash: a foreground command from the SDK's palette.
func moveSDKBash(g *gen) {
	g.call("bash", o("command", pick(g, sdkBashOutputs...), "description", "Generated command"), AreaBashForeground)
}

// moveOutsideWrite: with no sandbox, bash and write reach beside the
// workspace (a name of the case's own in /tmp: the workspace's parent is a
// temporary directory of a random name upstream).
func moveOutsideWrite(g *gen) {
	name := fmt.Sprintf("/tmp/dsh-jsonrpc-%d.txt", g.r.IntN(1000))
	if g.chance(0.5) {
		g.call("bash", o("command", fmt.Sprintf("printf outside > %s && cat %s", name, name), "description", "Write outside"), AreaNoBoundary, AreaBashForeground)
		return
	}
	g.call("write", o("file_path", name, "content", "outside\n"), AreaNoBoundary, AreaWrite)
}

// moveOneShotChild: a foreground one-shot subagent whose child runs a call
// or two and answers; or a call the tool refuses (run_in_background is off
// in this composition, a missing prompt).
func moveOneShotChild(g *gen) {
	g.mark(AreaDelegation)
	if g.chance(0.3) {
		g.call("subagent", pick(g, o("description", "Refused", "prompt", "p", "run_in_background", true), o("description", "Refused")), AreaDelegationArgs)
		return
	}
	n := g.newChild(0)
	g.call("subagent", o("description", pick(g, "Generated task", "x"), "prompt", pick(g, "Run the generated calls, then answer.", "Tâche: réponds 😀")))
	var steps []oracle.Step
	for range g.r.IntN(3) {
		g.mark(AreaChildTools)
		steps = append(steps, stepOf(pick(g,
			callOf("bash", o("command", pick(g, "echo CHILD_RAN", "echo err >&2; exit 3", "cat a.txt"), "description", "Child command")),
			callOf("read", o("file_path", pick(g, "a.txt", "missing.txt"))),
			callOf("write", o("file_path", fmt.Sprintf("child-%d.txt", n), "content", "from child\n")))))
	}
	g.setChild(n, append(steps, oracle.Step{Text: pick(g, "child answer 42", "CHILD DONE")}))
}

// persistentCommands are persistent bash commands: state kept from call to
// call (a variable, the directory, a function), output forms and exit
// codes. A shell that exits (exit 9) is not among them: whether the
// terminal echoes "exit" before the shell ends races upstream.
var persistentCommands = []string{
	"export DSH_GEN_COUNT=1; echo COUNT=$DSH_GEN_COUNT",
	"DSH_GEN_COUNT=$((DSH_GEN_COUNT + 1)); echo COUNT=$DSH_GEN_COUNT",
	"cd sub && pwd | sed 's|.*/||'",
	"cd /tmp && echo CWD=$PWD",
	"f() { echo fn:$1; }; f one",
	"f two",
	"echo out; echo err >&2",
	"false",
	"(exit 7); echo status=$?",
	"printf 'no newline'",
	"printf 'a\\tb\\n'",
	"seq 1 3",
	"cat a.txt",
	"nosuchcommand_dshgen",
	"echo '€ and ü'",
}

// movePersistentBash: a command of the persistent shell.
func movePersistentBash(g *gen) {
	g.call("bash", o("command", pick(g, persistentCommands...)), AreaPersistentBash)
}

// moveEditor: one str_replace_editor command, on a path under the
// workspace ({{cwd}}, which the run's fixture resolves) or one it refuses.
func moveEditor(g *gen) {
	p := func(name string) string { return "{{cwd}}/" + name }
	file := pick(g, "note.txt", "a.txt", "sub/b.txt", "new/deep.txt")
	args := pick(g,
		o("command", "create", "path", p(file), "file_text", pick(g, "target:\n\told\n", "one\ntwo\ntwo\n", "")),
		o("command", "view", "path", p(file)),
		o("command", "view", "path", p("sub")),
		o("command", "view", "path", p("a.txt"), "view_range", pick[any](g, []int{1, 2}, []int{2, -1}, []int{5, 9}, []int{0, 1})),
		o("command", "str_replace", "path", p("a.txt"), "old_str", pick(g, "beta", "a", "missing", ""), "new_str", "BETA"),
		o("command", "str_replace", "path", p(file), "old_str", "\told", "new_str", "\tnew"),
		o("command", "insert", "path", p("a.txt"), "insert_line", pick[any](g, 0, 1, 3, 99, -1), "new_str", "inserted"),
		o("command", "undo_edit", "path", p("a.txt")),
		o("command", "view", "path", "a.txt"),
		o("command", "delete", "path", p("a.txt")),
		o("command", "view"),
	)
	g.call(oracle.EditorTool, args, AreaEditor)
}
