package scenarios

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay/cli"
	"github.com/dshsim/dshsim/harness/simcli"
	_ "github.com/dshsim/dshsim/harness/sims" // registers the sims dsh-sim runs
	"github.com/dshsim/dshsim/sandbox/landlock"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// commands are the programs scripts run with exec; each is the same Main its
// cmd/ binary calls.
var commands = map[string]func(){
	"dsh-replay":   func() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	"dsh-sim":      func() { os.Exit(simcli.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	"landlock-run": func() { os.Exit(landlock.Main(os.Args[1:], os.Stdout, os.Stderr)) },
}

func TestMain(m *testing.M) {
	testscript.Main(m, commands)
}

func TestScripts(t *testing.T) {
	root, err := harness.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 ".",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       harness.Updating(),
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			env.Setenv("LC_ALL", "C")
			return nil
		},
		Condition: sandboxtest.Condition,
		Cmds:      scriptCmds,
	})
}

// scriptCmds are the commands scripts get beyond testscript's own.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"tamper": cmdTamper,
}

// TestDocListsCommands keeps the package manual in step with the registries:
// every command and script command is described there.
func TestDocListsCommands(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(src), "\npackage scenarios")
	for name := range commands {
		if !strings.Contains(doc, name) {
			t.Errorf("command %s is not described in the package manual", name)
		}
	}
	for name := range scriptCmds {
		if !strings.Contains(doc, "//\t"+name+" ") {
			t.Errorf("script command %s is not described in the package manual", name)
		}
	}
	for _, cond := range []string{"[landlock:N]", "[bwrap]"} {
		if !strings.Contains(doc, cond) {
			t.Errorf("condition %s is not described in the package manual", cond)
		}
	}
}

// cmdTamper changes line 1 of the first non-empty file under DIR.
func cmdTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! tamper")
	}
	if len(args) != 1 {
		ts.Fatalf("usage: tamper DIR")
	}
	dir := ts.MkAbs(args[0])
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	ts.Check(err)
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		ts.Check(err)
		if len(data) == 0 {
			continue
		}
		_, rest, _ := strings.Cut(string(data), "\n")
		ts.Check(os.WriteFile(f, []byte("tampered by the scenario\n"+rest), 0o644))
		rel, err := filepath.Rel(dir, f)
		ts.Check(err)
		fmt.Fprintf(ts.Stdout(), "tampered %s:1\n", filepath.ToSlash(rel))
		return
	}
	ts.Fatalf("tamper: no non-empty file under %s", args[0])
}

// TestREADMELayout keeps the README's layout table in step with the tree:
// every directory holding a Go package has its line.
func TestREADMELayout(t *testing.T) {
	root, err := harness.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || p == filepath.Join(root, "bin") || p == filepath.Join(root, "build")) {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil || rel == "." {
			return err
		}
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		if line := "| `" + filepath.ToSlash(rel) + "` |"; !strings.Contains(string(readme), line) {
			t.Errorf("README.md layout has no line for package %s (add %s what it holds |)", filepath.ToSlash(rel), line)
		}
		return nil
	})
	if len(seen) < 10 {
		t.Errorf("found only %d package directories; the walk is broken", len(seen))
	}
	if err != nil {
		t.Fatal(err)
	}
}
