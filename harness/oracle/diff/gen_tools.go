package diff

import (
	"fmt"
	"sort"
	"strings"
)

// The tools profile: the plugins around the tool calls that the overlay
// mounts on a switch. The repeat-tool reminder is always mounted (our
// replay composes it, as upstream's base profile does, so a case that calls
// the same tool three times needs it upstream too); todo_write, glob and
// grep, and the workspace instructions (AGENTS.md) each on a coin. A move
// of a plugin that is not mounted falls back to a read.

// setupTools picks the switches and seeds what they read.
func setupTools(g *gen) {
	for !g.set.Todo && !g.set.FSSearch && !g.set.Instructions {
		g.set.Todo, g.set.FSSearch, g.set.Instructions = g.chance(0.5), g.chance(0.5), g.chance(0.4)
	}
	if g.set.Instructions {
		g.seedInstructions()
	}
	if g.set.FSSearch {
		g.seedSearch()
	}
}

// instructionTexts are AGENTS.md contents: plain, empty, blank, CRLF, a
// byte-order mark, the reminder's closing tag, non-ASCII, no final newline.
var instructionTexts = []string{
	"Root instruction.\n",
	"",
	"  \n\n",
	"Line one.\r\nLine two.\r\n",
	"\ufeffMarked instruction.\n",
	"Note with </system-reminder> inside.\n",
	"Prüfe alles ✓\n",
	"No final newline",
}

// seedInstructions seeds instruction files at the root, in a subdirectory,
// user-global (<cwd>/.dsh is $DSH_HOME), and sometimes the root markers.
func (g *gen) seedInstructions() {
	g.mark(AreaInstructions)
	names := []string{"AGENTS.md", "CLAUDE.md", "AGENTS.local.md", "sub/AGENTS.md", "sub/CLAUDE.md", ".dsh/AGENTS.md", "deep/a/AGENTS.md"}
	for _, n := range names {
		if g.chance(0.45) {
			g.ws[n] = pick(g, instructionTexts...)
		}
	}
	if g.ws["AGENTS.md"] != "" && g.chance(0.3) {
		g.ws["CLAUDE.md"] = g.ws["AGENTS.md"] // a duplicate
	}
	g.ws["deep/a/x.txt"] = "deep file\n"
	switch g.r.IntN(4) {
	case 0:
		g.set.InstructionMarkers = `["marker.root"]`
		g.ws["marker.root"] = ""
	case 1:
		g.set.InstructionMarkers = `["sub"]`
	}
}

// seedSearch seeds files for glob and grep; pinMtimes orders them.
func (g *gen) seedSearch() {
	g.mark(AreaFSSearch)
	g.ws["src/a.ts"] = "export const needle = 1\nconst hay = 2\n"
	g.ws["src/b.js"] = "no match here\n"
	g.ws["docs/guide.md"] = "# Guide\nneedle in docs\n"
	if g.chance(0.5) {
		g.ws[".hidden/x.ts"] = "needle hidden\n"
	}
	if g.chance(0.5) {
		g.ws["deep/one/two/three.ts"] = "needle deep\nNEEDLE upper\n"
	}
	if g.chance(0.3) {
		g.ws["sp ace/ü.txt"] = "needle ünïcödé\n"
	}
}

// pinMtimes is a bash call that gives every seeded file its own mtime
// (glob sorts by modification time; the seeding gives them all one).
func (g *gen) pinMtimes() {
	var names []string
	for n := range g.ws {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		fmt.Fprintf(&b, "touch -d '2001-02-03 04:05:%02d' '%s'; ", i%60, n)
	}
	g.call("bash", o("command", strings.TrimSuffix(b.String(), " "), "description", "Pin modification times"), AreaBashForeground)
}

// moveRepeat: the same call three or more times in a row (the reminder at
// 3 and 5), its keys sometimes reordered (the same canonical call), or
// broken by another call after two.
func moveRepeat(g *gen) {
	g.mark(AreaReminder)
	var args []obj
	name := "read"
	switch g.r.IntN(4) {
	case 0:
		args = []obj{o("file_path", "a.txt", "offset", 1), o("offset", 1, "file_path", "a.txt")}
	case 1:
		name = "bash"
		cmd := pick(g, "echo same", "echo "+strings.Repeat("x", 600))
		args = []obj{o("command", cmd, "description", "Same"), o("description", "Same", "command", cmd)}
	case 2:
		if g.set.Todo {
			name = "todo_write"
			args = []obj{o("todos", []obj{o("content", "same", "status", "pending")})}
			break
		}
		fallthrough
	default:
		args = []obj{o("file_path", "sub/b.txt")}
	}
	n := pick(g, 3, 3, 4, 5, 2)
	for i := range n {
		g.call(name, pick(g, args...))
		if i == 1 && g.chance(0.2) {
			g.call("read", o("file_path", "a.txt", "limit", 1), AreaRead) // breaks the run
		}
	}
}

// todoLists are todo_write arguments: valid lists, every refusal.
var todoLists = []any{
	o("todos", []obj{o("content", "  read the code  ", "status", "in_progress"), o("content", "write the fix", "status", "pending"), o("content", "ship", "status", "completed")}),
	o("todos", []obj{o("content", "one", "status", "in_progress"), o("content", "two", "status", "in_progress")}),
	o("todos", []obj{o("content", "a", "status", "pending"), o("content", " \t ", "status", "pending")}),
	o("todos", []obj{o("content", "same <x> & \"y\"", "status", "pending"), o("content", " same <x> & \"y\"", "status", "completed")}),
	o("todos", []obj{o("content", "a", "status", "done")}),
	o("todos", []obj{o("content", "a", "status", "pending", "note", "extra")}),
	o("todos", []obj{o("content", "a")}),
	o("todos", []obj{o("status", "pending")}),
	o("todos", []obj{o("content", 7, "status", "pending")}),
	o("todos", []obj{o("content", "line\nbreak", "status", "pending")}),
	o("todos", []obj{o("content", "ünïcödé ✓ 日本", "status", "completed")}),
	o("todos", []any{}),
	o("todos", "not a list"),
	o("todos", []any{"a string"}),
	o("todos", nil),
	o(),
	o("todos", []obj{o("content", "x", "status", "pending")}, "extra", true),
}

// moveTodo: a todo_write call with one of the lists.
func moveTodo(g *gen) {
	if !g.set.Todo {
		moveRead(g)
		return
	}
	g.call("todo_write", pick(g, todoLists...), AreaTodo)
}

// globArgs and grepArgs are search arguments: patterns that match many,
// few or none, depth, braces, an invalid class, blanks, paths inside, a
// file, missing.
var globArgs = []obj{
	o("pattern", "*.ts"),
	o("pattern", "*"),
	o("pattern", "**/*.md"),
	o("pattern", "*.rs"),
	o("pattern", "**/two/*.ts"),
	o("pattern", "{*.ts,*.md}"),
	o("pattern", "[a-"),
	o("pattern", "   "),
	o("pattern", ""),
	o("pattern", "*", "path", "src"),
	o("pattern", "*", "path", "./docs/"),
	o("pattern", "*", "path", " "),
	o("pattern", "*", "path", "a.txt"),
	o("pattern", "*", "path", "missing-dir"),
	o("pattern", "*.txt", "path", "sub"),
	o("pattern", 5),
	o("path", "src"),
}

// grepArgs match in one file at most: rg searches files in parallel, so
// the order of several files' matches is a race in upstream's own runs.
var grepArgs = []obj{
	o("pattern", "needle", "path", "src/a.ts"),
	o("pattern", "needle", "path", "docs"),
	o("pattern", "needle", "include", "*.md"),
	o("pattern", "needle", "include", "*.js"),
	o("pattern", "needle", "path", "src", "include", "*.ts,*.md"),
	o("pattern", "needle", "path", "docs", "include", "!*.ts"),
	o("pattern", "needle", "path", "src", "include", "  "),
	o("pattern", "absent-word"),
	o("pattern", "^export const (\\w+)"),
	o("pattern", "(?i)needle", "path", "deep"),
	o("pattern", "alpha|beta"),
	o("pattern", "(unclosed", "path", "src"),
	o("pattern", ""),
	o("pattern", "  "),
	o("pattern", "needle", "path", "a.txt"),
	o("pattern", "needle", "path", "missing-dir"),
	o("include", "*.ts"),
}

// moveSearch: a glob or grep call (the first one pins the mtimes).
func moveSearch(g *gen) {
	if !g.set.FSSearch {
		moveRead(g)
		return
	}
	if !g.pinned {
		g.pinMtimes()
		g.pinned = true
	}
	if g.chance(0.5) {
		g.call("glob", pick(g, globArgs...), AreaFSSearch)
	} else {
		g.call("grep", pick(g, grepArgs...), AreaFSSearch)
	}
}

// moveInstructions: calls that touch the instruction files' directories
// (a nested read, a deep write, an edited or removed instruction file).
func moveInstructions(g *gen) {
	if !g.set.Instructions {
		moveRead(g)
		return
	}
	switch g.r.IntN(4) {
	case 0:
		g.call("read", o("file_path", pick(g, "sub/b.txt", "deep/a/x.txt")), AreaRead)
	case 1:
		g.call("write", o("file_path", pick(g, "deep/a/new.txt", "sub/new.txt", "fresh/dir/new.txt"), "content", "new\n"), AreaWrite)
	case 2:
		f := pick(g, "sub/AGENTS.md", "deep/a/AGENTS.md", "AGENTS.md")
		// bytes a workspace seed cannot hold: not UTF-8, a NUL (binary)
		text := pick(g, `Edited instruction.\n`, `Edited instruction.\n`, `bad \377 byte\n`, `cut \342\202`, `nul\000byte\n`)
		g.call("bash", o("command", "printf '"+text+"' > "+f, "description", "Edit an instruction file"), AreaBashForeground)
		g.call("read", o("file_path", "deep/a/x.txt"), AreaRead)
	default:
		g.call("bash", o("command", "rm -f sub/AGENTS.md deep/a/AGENTS.md", "description", "Remove instruction files"), AreaBashForeground)
		g.call("read", o("file_path", "sub/b.txt"), AreaRead)
	}
}
