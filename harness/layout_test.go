package harness

import (
	"bytes"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The import rules of the package layout (README.md, Layout): every arrow of the
// import graph points down. An arrow is a non-test import of one package of
// this module by another; tests may reach up (a product package's tests use
// harness.Golden), the packages themselves may not.
//
// Each rule names who it binds (from), what they must not import (to), and
// why. Paths are relative to the module root; "x/..." is x and everything
// under it.
var layoutRules = []struct {
	from, except []string // who the rule binds, and who it does not
	to, allow    []string // what they must not import, and what they still may
	why          string
}{
	{from: []string{"..."}, except: []string{"harness/...", "cmd/...", "scenarios"}, to: []string{"harness/..."},
		why: "harness/ is test tooling: no product package imports it"},
	{from: []string{"sandbox/..."}, to: []string{"..."}, allow: []string{"sandbox/..."},
		why: "the sandbox tree is self-contained: nothing under sandbox/ imports a package outside it"},
	{from: []string{"sandbox"}, to: []string{"sandbox/..."}, allow: []string{"sandbox/internal/...", "sandbox/procfs"},
		why: "package sandbox imports none of its subpackages (they import it), only sandbox/internal/... and the leaf sandbox/procfs"},
	{from: []string{"sandbox/spawn"}, to: []string{"render", "sandbox/inproc", "sandbox/landlock"},
		why: "process spawning does not depend on presentation or on one confiner: it takes any Confiner and returns a sandbox.Report"},
	{from: []string{"sandbox/chain"}, to: []string{"sandbox/..."}, allow: []string{"sandbox", "sandbox/inproc", "sandbox/internal/seal"},
		why: "the deployment's confiner composes the provider's chain and the in-process path only; spawn takes it as any Confiner"},
	{from: []string{"sandbox/internal/llsys", "pipeline/session"}, to: []string{"..."},
		why: "a leaf: the syscall layer and the session log import nothing of this module"},
	{from: []string{"pipeline"}, to: []string{"sandbox/...", "tools/...", "stack/..."},
		why: "the pipeline knows calls and results, not the sandbox or the tools"},
	{from: []string{"pipeline/...", "escalation", "fsobserve", "spill", "render"}, to: []string{"tools/...", "stack/..."},
		why: "the tools and the composition root stand on these, not the other way round"},
	{from: []string{"hooks/..."}, to: []string{"tools/...", "stack/..."},
		why: "the hook bridges are pipeline listeners the composition root mounts; they know calls, not the tools or their composer"},
	{from: []string{"hooks/jsregex", "internal/jsjson"}, to: []string{"..."},
		why: "a leaf: JavaScript's regular expressions and JSON import nothing of this module"},
	{from: []string{"sandbox/procfs"}, to: []string{"..."},
		why: "a leaf: the /proc reader imports nothing of this module, so every part of it (the sandbox tree included) may stand on it"},
	{from: []string{"tools/..."}, to: []string{"stack/..."},
		why: "stack composes the tools (and the delegation runtime, stack/subagents, drives them); a tool does not reach its composer"},
	{from: []string{"stack/subagents"}, to: []string{"stack"},
		why: "the delegation runtime sits below the composition root: the stack is its Host, not an import"},
	{from: []string{"render"}, to: []string{"sandbox/spawn"},
		why: "render reads the sandbox.Report, not the executor"},
	{from: []string{"..."}, except: []string{"harness/...", "sandbox/chain/chaintest"}, to: []string{"sandbox/chain/chaintest"},
		why: "chaintest is test support: only _test.go files and harness/ import it"},
	{from: []string{"..."}, except: []string{"harness/...", "sandbox/sandboxtest", "sandbox/chain/chaintest"}, to: []string{"sandbox/sandboxtest"},
		why: "sandboxtest is test support: only _test.go files and harness/ import it"},
	{from: []string{"..."}, except: []string{"harness/..."}, to: []string{"pipeline/session/sessiontest", "pipeline/pipelinetest"},
		why: "sessiontest and pipelinetest are test support: only _test.go files and harness/ import them"},
	{from: []string{"..."}, except: []string{"harness/..."}, to: []string{"internal/waittest"},
		why: "waittest is test support: only _test.go files and harness/ import it"},
	{from: []string{"internal/waittest"}, to: []string{"..."},
		why: "a leaf: the bounded waits of tests import nothing of this module"},
	{from: []string{"pipeline/session/sessiontest"}, to: []string{"..."}, allow: []string{"pipeline/session"},
		why: "sessiontest stands on the session log alone"},
	{from: []string{"pipeline/pipelinetest"}, to: []string{"..."}, allow: []string{"pipeline"},
		why: "pipelinetest stands on the pipeline alone"},
	{from: []string{"cmd/..."}, to: []string{"stack/...", "tools/...", "pipeline/...", "sandbox", "sandbox/spawn", "sandbox/inproc", "sandbox/chain"},
		why: "a cmd/ main is thin: it calls one package's Main"},
	{from: []string{"harness/replay/..."}, to: []string{"harness/escape/..."},
		why: "the escape corpus attacks the replay (its hostile recordings); the replay does not stand on its attacker"},
	{from: []string{"..."}, except: []string{"harness/escape/..."}, to: []string{"harness/replay/hostile"},
		why: "hostile recordings are attacks: only the escape corpus and tests use them"},
}

// matchPkg reports whether pkg matches pattern ("x", "x/..." or "...").
func matchPkg(pkg, pattern string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func matchAny(pkg string, patterns []string) bool {
	for _, p := range patterns {
		if matchPkg(pkg, p) {
			return true
		}
	}
	return false
}

// upwardArrows returns every import in graph (importer -> imports, module
// relative) that a layout rule forbids, one line each, sorted.
func upwardArrows(graph map[string][]string) []string {
	var bad []string
	for from, imports := range graph {
		for _, to := range imports {
			for _, r := range layoutRules {
				if from == to || !matchAny(from, r.from) || matchAny(from, r.except) || !matchAny(to, r.to) || matchAny(to, r.allow) {
					continue
				}
				bad = append(bad, from+" imports "+to+": "+r.why)
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// importGraph parses the non-test Go files under root (testdata skipped)
// and returns each package directory's imports of module packages, module
// relative.
func importGraph(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	seen := map[string]map[string]bool{}
	walkSources(t, root, func(_ *token.FileSet, from string, f *ast.File) {
		if seen[from] == nil {
			seen[from] = map[string]bool{}
			graph[from] = []string{}
		}
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", from, spec.Path.Value, err)
			}
			to, ok := strings.CutPrefix(path, ModulePath+"/")
			if !ok || seen[from][to] {
				continue
			}
			seen[from][to] = true
			graph[from] = append(graph[from], to)
		}
	})
	return graph
}

// TestImportArrowsPointDown fails on any import of this module that climbs
// the layout: a product package importing test tooling, the sandbox tree
// reaching out of itself, spawn importing render, and the rest of
// layoutRules.
func TestImportArrowsPointDown(t *testing.T) {
	root := Root(t)
	graph := importGraph(t, root)
	for _, pkg := range []string{"sandbox", "sandbox/spawn", "render", "pipeline/session", "tools/bash", "harness/sims"} {
		if _, ok := graph[pkg]; !ok {
			t.Fatalf("package %s not found under %s: the walk is broken", pkg, root)
		}
	}
	if !matchAny("sandbox", graph["sandbox/spawn"]) {
		t.Fatalf("sandbox/spawn's imports %v lack sandbox: the parse is broken", graph["sandbox/spawn"])
	}
	for _, line := range upwardArrows(graph) {
		t.Error(line)
	}
}

// TestUpwardArrowsAreFound plants each kind of upward arrow in a small graph:
// every one must be reported, and the allowed arrows must not be.
func TestUpwardArrowsAreFound(t *testing.T) {
	allowed := map[string][]string{
		"sandbox":                {"sandbox/internal/llsys"},
		"sandbox/spawn":          {"sandbox"},
		"pipeline":               {"pipeline/session"},
		"sandbox/inproc":         {"sandbox", "sandbox/landlock"},
		"sandbox/landlock":       {"sandbox/internal/llsys"},
		"sandbox/sandboxtest":    {"sandbox", "sandbox/internal/llsys"},
		"render":                 {"sandbox"},
		"tools/bash":             {"escalation", "pipeline", "render", "sandbox", "sandbox/spawn", "tools/jobs"},
		"stack":                  {"tools/bash", "tools/fs", "pipeline/session", "sandbox", "stack/subagents"},
		"stack/subagents":        {"tools/subagent", "tools/toolreg", "pipeline"},
		"harness/sims":           {"harness", "stack", "sandbox/sandboxtest", "render"},
		"cmd/landlock-run":       {"sandbox/landlock"},
		"harness/escape":         {"harness/replay", "harness/replay/hostile", "sandbox/spawn"},
		"harness/replay/hostile": {"harness/replay", "harness/replay/recording", "sandbox"},
		"cmd/dsh-sim":            {"harness/simcli", "harness/sims"},
		"scenarios":              {"harness", "sandbox/landlock"},
		"hooks":                  {"hooks/jsregex", "internal/jsjson", "pipeline"},
		"tools/code":             {"internal/jsjson", "pipeline", "sandbox/spawn"},
		"pipeline/policy":        {"internal/jsjson"},

		// test support stands on what it supports
		"pipeline/session/sessiontest": {"pipeline/session"},
		"pipeline/pipelinetest":        {"pipeline"},
	}
	if got := upwardArrows(allowed); len(got) != 0 {
		t.Fatalf("allowed arrows reported:\n%s", strings.Join(got, "\n"))
	}
	planted := []struct{ from, to string }{
		{"pipeline/policy", "harness/replay"},
		{"stack", "harness/sims"},
		{"sandbox", "sandbox/landlock"},
		{"sandbox/spawn", "render"},
		{"sandbox/spawn", "sandbox/inproc"},
		{"sandbox/inproc", "internal/anything"},
		{"internal/jsjson", "pipeline"},
		{"hooks/jsregex", "internal/jsjson"},
		{"sandbox/landlock", "pipeline"},
		{"pipeline/session", "sandbox"},
		{"pipeline", "sandbox"},
		{"escalation", "tools/bash"},
		{"tools/fs", "stack"},
		{"tools/subagent", "stack/subagents"},
		{"stack/subagents", "stack"},
		{"render", "sandbox/spawn"},
		{"tools/bash", "sandbox/sandboxtest"},
		{"stack", "pipeline/session/sessiontest"},
		{"pipeline/session/sessiontest", "pipeline"},
		{"pipeline/approval", "pipeline/pipelinetest"},
		{"pipeline/pipelinetest", "pipeline/session"},
		{"cmd/landlock-run", "sandbox/spawn"},
		{"tools/code", "internal/waittest"},
		{"internal/waittest", "sandbox/sandboxtest"},
		{"harness/replay", "harness/escape"},
		{"harness/replay/isolate", "harness/escape"},
		{"harness/replay/cli", "harness/replay/hostile"},
		{"stack", "harness/replay/hostile"},
	}
	for _, p := range planted {
		if got := upwardArrows(map[string][]string{p.from: {p.to}}); len(got) == 0 {
			t.Errorf("%s -> %s is not reported", p.from, p.to)
		}
	}
}

// stackMaxLines bounds the composition root: stack's non-test Go, doc.go
// included. The delegation runtime lives in stack/subagents, each tool in
// its own package; what grows the root past this belongs there.
const stackMaxLines = 1600

// TestStackIsTheCompositionRootOnly holds stack/ to stackMaxLines lines of
// non-test Go.
func TestStackIsTheCompositionRootOnly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(Root(t), "stack", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	if n == 0 || n > stackMaxLines {
		t.Errorf("stack/ holds %d lines of non-test Go; want 1 to %d (move what is not composition into a package below it)", n, stackMaxLines)
	}
}
