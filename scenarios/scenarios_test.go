package scenarios

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/escape/probe"
	"github.com/dshsim/dshsim/harness/kernels"
	"github.com/dshsim/dshsim/harness/replay/cli"
	"github.com/dshsim/dshsim/harness/replay/recordcli"
	"github.com/dshsim/dshsim/harness/simcli"
	"github.com/dshsim/dshsim/harness/sims"
	"github.com/dshsim/dshsim/sandbox/landlock"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// commands are the programs scripts run with exec; each is the same Main its
// cmd/ binary calls.
var commands = map[string]func(){
	"dsh-replay":    func() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	"dsh-sim":       func() { os.Exit(simcli.Main(sims.All(), os.Args[1:], os.Stdout, os.Stderr)) },
	"dsh-record":    func() { os.Exit(recordcli.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	"landlock-run":  func() { os.Exit(landlock.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	"kernel-matrix": func() { os.Exit(kernels.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	"matrix-agent":  func() { os.Exit(kernels.AgentMain(os.Args[1:], os.Stdout, os.Stderr)) },
	"escape-probe":  func() { os.Exit(probe.Run(os.Args[1:], os.Stdout, os.Stderr)) },
}

func TestMain(m *testing.M) {
	testscript.Main(m, commands)
}

func TestScripts(t *testing.T) {
	root := harness.Root(t)
	goEnv, err := goToolEnv()
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
			// A command that runs the go tool (dsh-sim's sandbox sim builds
			// the runner) uses the caller's build and module caches, never
			// $HOME/.cache of the hermetic HOME (root would make /no-home,
			// which a later user cannot write), and keeps go's own config
			// and telemetry inside the work directory.
			for _, kv := range goEnv {
				env.Setenv(kv[0], kv[1])
			}
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			// Scratch directories (outside the temp areas) go to a fresh
			// directory of this script, which must be empty at the end, as
			// must the script's TMPDIR: no command leaves anything behind.
			scratch, err := sandboxtest.MkdirScratch("dshsim-scenario-")
			if err != nil {
				return err
			}
			env.Setenv(sandboxtest.ScratchEnv, scratch)
			env.Setenv("SCRATCH", scratch)
			tmp := env.Getenv("TMPDIR")
			env.Defer(func() {
				defer os.RemoveAll(scratch)
				if left := sandboxtest.Leftovers(tmp, scratch); len(left) > 0 {
					env.T().Fatal("left behind: " + strings.Join(left, ", "))
				}
			})
			return nil
		},
		Condition: sandboxtest.Condition,
		Cmds:      scriptCmds,
	})
}

// goToolEnv is the go tool's cache locations of the caller (go env of the
// go on PATH, which go test puts first: the toolchain running the test).
func goToolEnv() ([][2]string, error) {
	names := []string{"GOCACHE", "GOMODCACHE", "GOPATH"}
	out, err := exec.Command("go", append([]string{"env"}, names...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(vals) != len(names) {
		return nil, fmt.Errorf("go env printed %q", out)
	}
	kv := make([][2]string, len(names))
	for i, n := range names {
		kv[i] = [2]string{n, vals[i]}
	}
	return kv, nil
}

// scriptCmds are the commands scripts get beyond testscript's own.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"docblock": cmdDocblock,
	"quoted":   cmdQuoted,
	"tamper":   cmdTamper,
	"usage":    cmdUsage,
}

// cmdQuoted FILE REGEXP keeps a quotation of the docs true: REGEXP, with one
// group, must match the last command's stdout and FILE (relative to $REPO),
// and the group must be the same text in both: a README that quotes
// "12 sims, 21 files" fails once the run prints 13 sims.
func cmdQuoted(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: quoted FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	if re.NumSubexp() != 1 {
		ts.Fatalf("quoted: %q has %d groups, want one", args[1], re.NumSubexp())
	}
	got := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if got == nil {
		ts.Fatalf("quoted: stdout has no match of %q", args[1])
	}
	doc, err := os.ReadFile(filepath.Join(ts.Getenv("REPO"), args[0]))
	ts.Check(err)
	want := re.FindStringSubmatch(string(doc))
	if want == nil {
		ts.Fatalf("quoted: %s has no match of %q (the quotation moved or was reworded)", args[0], args[1])
	}
	if want[1] != got[1] {
		ts.Fatalf("quoted: %s quotes %q, the command prints %q: update the quotation", args[0], want[1], got[1])
	}
}

// cmdUsage runs CMD ARGS... and fails unless it is a usage error as every
// command gives one: exit status 2, nothing on stdout, exactly one line on
// stderr that starts "CMD: " and ends "; run CMD -h for usage". Its stdout
// and stderr stay for the next stdout/stderr checks.
func cmdUsage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: usage CMD [ARG...]")
	}
	err := ts.Exec(args[0], args[1:]...)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		ts.Fatalf("%s: %v, want exit status 2", args[0], err)
	}
	stdout, stderr := ts.ReadFile("stdout"), ts.ReadFile("stderr")
	if stdout != "" {
		ts.Fatalf("%s wrote to stdout on a usage error: %q", args[0], stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, args[0]+": ") || !strings.HasSuffix(stderr, "; run "+args[0]+" -h for usage\n") {
		ts.Fatalf("%s: stderr %q is not one line %q", args[0], stderr, args[0]+": <problem>; run "+args[0]+" -h for usage")
	}
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
	if len(args) == 3 {
		tamperLine(ts, args[0], args[1], args[2])
		return
	}
	if len(args) != 1 {
		ts.Fatalf("usage: tamper DIR, or tamper FILE:LINE OLD NEW")
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

// tamperLine replaces the first old in line n of the work directory's file
// (spec FILE:N) by new, failing when the line does not hold old.
func tamperLine(ts *testscript.TestScript, spec, old, new string) {
	file, num, ok := strings.Cut(spec, ":")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 1 {
		ts.Fatalf("tamper: %q is not FILE:LINE", spec)
	}
	path := ts.MkAbs(file)
	data, err := os.ReadFile(path)
	ts.Check(err)
	lines := strings.Split(string(data), "\n")
	if n > len(lines) || !strings.Contains(lines[n-1], old) {
		ts.Fatalf("tamper: %s has no %q at line %d", file, old, n)
	}
	lines[n-1] = strings.Replace(lines[n-1], old, new, 1)
	ts.Check(os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
}

// readmeMaxLines bounds the README: an entry point (what dshsim is, the two
// commands, the layout, links); the rest lives in docs/.
const readmeMaxLines = 150

// readREADME returns the repository root and its README.md.
func readREADME(t *testing.T) (root, readme string) {
	t.Helper()
	root = harness.Root(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return root, string(b)
}

// TestREADMEIsAnEntryPoint keeps the README short and starting with the two
// commands a fresh machine runs.
func TestREADMEIsAnEntryPoint(t *testing.T) {
	_, readme := readREADME(t)
	if n := strings.Count(readme, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move detail into docs/", n, readmeMaxLines)
	}
	first := strings.SplitN(readme, "```", 3)
	if len(first) < 3 || !strings.Contains(first[1], "make sim") || !strings.Contains(first[1], "make test") {
		t.Errorf("README.md's first code block is not the two commands (make sim, make test)")
	}
}

// TestLayoutNamesEveryPackage keeps docs/layout.md's table in step with the tree:
// every directory holding a Go package has its line.
func TestLayoutNamesEveryPackage(t *testing.T) {
	root := harness.Root(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	layout := string(b)
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
		if line := "| `" + filepath.ToSlash(rel) + "` |"; !strings.Contains(layout, line) {
			t.Errorf("docs/layout.md has no line for package %s (add %s what it holds |)", filepath.ToSlash(rel), line)
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
