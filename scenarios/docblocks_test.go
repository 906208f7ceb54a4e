package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/snippets"
	"github.com/rogpeppe/go-internal/testscript"
)

// docBlock is one fenced block of a Markdown page.
type docBlock struct {
	Line  int    // 1-based page line of the opening fence
	Lang  string // the fence's info string ("" for none)
	Name  string // the NAME of a "<!-- checked: NAME -->" line just before it
	Lines []string
}

var checkedRE = regexp.MustCompile(`^<!-- checked: ([a-z0-9-]+) -->$`)

// docBlocks parses the fenced blocks of page (an unclosed one is an error).
func docBlocks(page string) ([]docBlock, error) {
	lines := strings.Split(page, "\n")
	var out []docBlock
	var cur *docBlock
	for i, ln := range lines {
		trimmed := strings.TrimLeft(ln, " ")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			b := docBlock{Line: i + 1, Lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
			for j := i - 1; j >= 0; j-- {
				if strings.TrimSpace(lines[j]) == "" {
					continue
				}
				if m := checkedRE.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil {
					b.Name = m[1]
				}
				break
			}
			cur = &b
		case cur != nil && strings.TrimSpace(ln) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.Lines = append(cur.Lines, ln)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: a fenced block that never closes", cur.Line)
	}
	return out, nil
}

// resolvedPages are the pages whose --8<-- includes dsh-sim -check resolves
// and checks against the fresh run (harness/simcli).
var resolvedPages = []string{"docs/tools.md"}

// shellCommands are the programs a sh block of the docs may run: a sh
// block holds what a reader types, never a copy of output.
var shellCommands = []string{"export", "git", "go", "llama-server", "make"}

// blockProblem says why block b of page is neither generated, nor checked,
// nor commands a reader types ("" when it is one of those). scripts are the
// scenarios' scripts, whose docblock lines check the marked blocks.
func blockProblem(page string, b docBlock, scripts string) string {
	if b.Name != "" {
		line := regexp.MustCompile(`(?m)^docblock ` + regexp.QuoteMeta(page) + ` ` + regexp.QuoteMeta(b.Name) + `( |$)`)
		if !line.MatchString(scripts) {
			return fmt.Sprintf("marked checked: %s, but no scenario script has a line docblock %s %s", b.Name, page, b.Name)
		}
		return ""
	}
	switch {
	case b.Lang == "sh":
		return shellProblem(b)
	case b.Lang == "md":
		for _, ln := range b.Lines {
			if t := strings.TrimSpace(ln); t != "" && !strings.HasPrefix(t, snippets.Marker+" ") && !strings.HasPrefix(ln, " ") {
				return fmt.Sprintf("an md block shows page source (include lines and their continuations); %q is neither", ln)
			}
		}
		return ""
	case slices.Contains(resolvedPages, page) && includesOnly(b):
		return ""
	}
	return fmt.Sprintf("a %q block that copies output or a file is neither generated (--8<-- includes, in a page dsh-sim -check resolves) nor checked (a <!-- checked: NAME --> line before it and a docblock line in a scenario script)", b.Lang)
}

// includesOnly reports a block whose every non-blank line is an include.
func includesOnly(b docBlock) bool {
	n := 0
	for _, ln := range b.Lines {
		if strings.TrimSpace(ln) == "" {
			continue
		}
		if _, err := snippets.Parse("", []byte(ln)); err != nil || !strings.HasPrefix(strings.TrimSpace(ln), snippets.Marker) {
			return false
		}
		n++
	}
	return n > 0
}

// shellProblem refuses a sh line that does not run one of shellCommands
// (after VAR=value assignments): pasted output is not a command.
func shellProblem(b docBlock) string {
	for i, ln := range b.Lines {
		cmd, _, _ := strings.Cut(ln, "#")
		fields := strings.Fields(cmd)
		for len(fields) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(fields[0]) {
			fields = fields[1:]
		}
		if len(fields) == 0 {
			if strings.TrimSpace(ln) != "" && !strings.HasPrefix(strings.TrimSpace(ln), "#") {
				return fmt.Sprintf("sh line %d %q runs nothing", i+1, ln)
			}
			continue
		}
		if !slices.Contains(shellCommands, fields[0]) {
			return fmt.Sprintf("sh line %d %q runs %q, not a command a reader types here (%s): output belongs in a checked text block", i+1, ln, fields[0], strings.Join(shellCommands, ", "))
		}
	}
	return ""
}

// docPages are the Markdown pages whose blocks are checked.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	for i, p := range pages {
		pages[i], _ = filepath.Rel(root, p)
		pages[i] = filepath.ToSlash(pages[i])
	}
	return pages
}

// scriptText is every scenario script, concatenated.
func scriptText(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestDocsOutputCopiesAreChecked scans every fenced block of README.md and
// docs/*.md: each is generated (includes of a page dsh-sim -check resolves),
// checked (marked "<!-- checked: NAME -->" and compared byte for byte with
// the real output or file by a scenario script's "docblock PAGE NAME ..."
// line), commands a reader types (sh, each line running one of a few
// programs) or page source (md). Anything else fails, naming page and line:
// a copy of output nothing checks.
func TestDocsOutputCopiesAreChecked(t *testing.T) {
	root := harness.Root(t)
	scripts := scriptText(t)
	checked := 0
	for _, page := range docPages(t, root) {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := docBlocks(string(data))
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		names := map[string]int{}
		for _, b := range blocks {
			if p := blockProblem(page, b, scripts); p != "" {
				t.Errorf("%s:%d: %s", page, b.Line, p)
			}
			if b.Name != "" {
				checked++
				if prev, ok := names[b.Name]; ok {
					t.Errorf("%s:%d: block name %s is taken (line %d)", page, b.Line, b.Name, prev)
				}
				names[b.Name] = b.Line
			}
		}
	}
	if checked == 0 {
		t.Error("no checked block found: the scan finds nothing")
	}
}

// TestBlockProblems: the scan's rules, each way.
func TestBlockProblems(t *testing.T) {
	scripts := "docblock docs/a.md make-sim stdout\n"
	for _, tc := range []struct {
		name, page string
		b          docBlock
		ok         bool
	}{
		{"checked and named by a script", "docs/a.md", docBlock{Lang: "text", Name: "make-sim", Lines: []string{"ok"}}, true},
		{"checked but named by no script", "docs/a.md", docBlock{Lang: "text", Name: "drift", Lines: []string{"ok"}}, false},
		{"checked in another page's name", "docs/b.md", docBlock{Lang: "text", Name: "make-sim", Lines: []string{"ok"}}, false},
		{"an unchecked output copy", "docs/a.md", docBlock{Lang: "text", Lines: []string{"ok agent-scope 1 file"}}, false},
		{"an unchecked go block", "docs/a.md", docBlock{Lang: "go", Lines: []string{"func F() {}"}}, false},
		{"commands", "docs/a.md", docBlock{Lang: "sh", Lines: []string{"DSHSIM_UPDATE=1 make test   # all", "go run ./cmd/dsh-replay x", "", "# a comment"}}, true},
		{"output pasted into sh", "docs/a.md", docBlock{Lang: "sh", Lines: []string{"go test ./x", "ok  	github.com/x 0.1s"}}, false},
		{"includes of the resolved page", "docs/tools.md", docBlock{Lang: "text", Lines: []string{`--8<-- "snapshots/txt/probe.txt"`}}, true},
		{"includes of a page nothing resolves", "docs/a.md", docBlock{Lang: "text", Lines: []string{`--8<-- "snapshots/txt/probe.txt"`}}, false},
		{"an include with text after it in the resolved page", "docs/tools.md", docBlock{Lang: "text", Lines: []string{`--8<-- "a.txt"   the whole file`}}, false},
		{"page source", "docs/a.md", docBlock{Lang: "md", Lines: []string{`--8<-- "a.txt"   the whole file`, "             and more"}}, true},
		{"output called page source", "docs/a.md", docBlock{Lang: "md", Lines: []string{"ok agent-scope"}}, false},
	} {
		if got := blockProblem(tc.page, tc.b, scripts); (got == "") != tc.ok {
			t.Errorf("%s: problem %q, want ok %v", tc.name, got, tc.ok)
		}
	}
	blocks, err := docBlocks("a\n<!-- checked: x -->\n\n```text\none\n```\n```sh\ngo\n```\n")
	if err != nil || len(blocks) != 2 || blocks[0].Name != "x" || blocks[0].Line != 4 || !slices.Equal(blocks[0].Lines, []string{"one"}) || blocks[1].Name != "" {
		t.Errorf("docBlocks: %+v, %v", blocks, err)
	}
	if _, err := docBlocks("```text\nnever closed\n"); err == nil {
		t.Error("an unclosed block was accepted")
	}
}

// cmdDocblock PAGE NAME SOURCE... checks the block of $REPO/PAGE marked
// "<!-- checked: NAME -->": its lines must be, byte for byte, the lines of
// the SOURCEs one after the other. A SOURCE is stdout (the last command's),
// a file of the work directory, or @PATH of the repository, each optionally
// narrowed as an include is (PATH:START:END, PATH:START, PATH:SECTION).
func cmdDocblock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: docblock PAGE NAME SOURCE...")
	}
	page := args[0]
	data, err := os.ReadFile(filepath.Join(ts.Getenv("REPO"), page))
	ts.Check(err)
	blocks, err := docBlocks(string(data))
	ts.Check(err)
	var doc *docBlock
	for i := range blocks {
		if blocks[i].Name == args[1] {
			doc = &blocks[i]
		}
	}
	if doc == nil {
		ts.Fatalf("docblock: %s has no block marked <!-- checked: %s -->", page, args[1])
	}
	var want []string
	for _, src := range args[2:] {
		want = append(want, docSource(ts, src)...)
	}
	for i := range max(len(doc.Lines), len(want)) {
		var d, w string
		if i < len(doc.Lines) {
			d = doc.Lines[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if i >= len(doc.Lines) || i >= len(want) || d != w {
			ts.Fatalf("docblock: %s:%d (block %s, its line %d): the page has %q, the source has %q (%d lines against %d): update the page", page, doc.Line+1+i, args[1], i+1, d, w, len(doc.Lines), len(want))
		}
	}
}

// docSource is the lines of one docblock SOURCE.
func docSource(ts *testscript.TestScript, src string) []string {
	if src == "stdout" {
		return strings.Split(strings.TrimSuffix(ts.ReadFile("stdout"), "\n"), "\n")
	}
	base := ts.Getenv("WORK")
	if rest, ok := strings.CutPrefix(src, "@"); ok {
		base, src = ts.Getenv("REPO"), rest
	}
	incs, err := snippets.Parse("docblock", []byte(snippets.Marker+` "`+src+`"`))
	ts.Check(err)
	data, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(incs[0].Path)))
	ts.Check(err)
	lines, err := snippets.Extract(incs[0], data)
	ts.Check(err)
	return lines
}
