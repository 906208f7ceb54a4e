package harness

import (
	"go/ast"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// commandsOn returns the commands that keep harness/cmdline's contract: each
// main package (cmd/<name>, .../cmd/<name>) whose package imports
// harness/cmdline directly or through one package it imports, by the main's
// directory name, sorted.
func commandsOn(graph map[string][]string, mains []string) []string {
	uses := func(pkg string) bool {
		for _, to := range graph[pkg] {
			if to == "harness/cmdline" {
				return true
			}
		}
		return false
	}
	var names []string
	for _, m := range mains {
		on := uses(m)
		for _, to := range graph[m] {
			on = on || uses(to)
		}
		if on {
			names = append(names, path.Base(m))
		}
	}
	sort.Strings(names)
	return names
}

// TestCmdlineDocListsItsCommands keeps the manual of harness/cmdline in step
// with the commands that use it: every one is named in its first paragraph.
func TestCmdlineDocListsItsCommands(t *testing.T) {
	root := Root(t)
	graph := importGraph(t, root)
	var mains []string
	walkSources(t, root, func(_ *token.FileSet, pkg string, f *ast.File) {
		if f.Name.Name == "main" && !slices.Contains(mains, pkg) {
			mains = append(mains, pkg)
		}
	})
	names := commandsOn(graph, mains)
	if len(names) < 6 {
		t.Fatalf("found the commands %v on harness/cmdline; want dsh-sim, dsh-replay, dsh-record, dsh-oracle, kernel-matrix and matrix-agent at least", names)
	}
	doc, err := os.ReadFile(filepath.Join(root, "harness", "cmdline", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(doc), "\n//\n")
	for _, n := range names {
		if !strings.Contains(first, n) {
			t.Errorf("harness/cmdline/doc.go's first paragraph does not name %s, which keeps its contract", n)
		}
	}
}
