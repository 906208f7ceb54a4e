package simcli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/snippets"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// testSims are constructed sims (this package tests the command, not the
// stack): alpha writes one text file through a Normalizer, beta two files.
// Their content is controlled by the variables below.
var (
	alphaLine3 = "line 3"
	betaFail   error
)

func testSims() []harness.Sim {
	return []harness.Sim{
		{Name: "alpha", Summary: "a constructed sim with one file", Files: []string{"txt/a.txt"},
			Run: func(env *harness.Env) (map[string][]byte, error) {
				ws, err := env.TempDir()
				if err != nil {
					return nil, err
				}
				n := harness.NewNormalizer().Workspace(ws)
				text := "line 1\nwrote " + ws + "/x\n" + alphaLine3 + "\nline 4\n"
				return map[string][]byte{"txt/a.txt": n.Bytes([]byte(text))}, nil
			}},
		{Name: "beta", Summary: "a constructed sim with two files", Files: []string{"out/b.txt", "txt/b.txt"},
			Run: func(env *harness.Env) (map[string][]byte, error) {
				if betaFail != nil {
					return nil, betaFail
				}
				return map[string][]byte{"out/b.txt": []byte("b full\nb 2\n"), "txt/b.txt": []byte("b\n")}, nil
			}},
	}
}

// mainEnv makes this test binary run dsh-sim on [blockingSims] instead of
// the tests: a real process to kill.
const mainEnv = "DSHSIM_SIMCLI_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(blockingSims(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// blockingSims is one sim that makes a temporary and a scratch directory,
// as the real sims do, and then runs until it is killed.
func blockingSims() []harness.Sim {
	return []harness.Sim{{Name: "block", Summary: "makes its directories, then waits to be killed", Files: []string{"txt/block.txt"},
		Run: func(env *harness.Env) (map[string][]byte, error) {
			if _, err := env.TempDir(); err != nil {
				return nil, err
			}
			root, err := sandboxtest.ScratchRoot()
			if err != nil {
				return nil, err
			}
			if _, _, err := harness.MkdirRun(root, "block"); err != nil {
				return nil, err
			}
			time.Sleep(time.Hour)
			return nil, errors.New("not killed")
		}}}
}

type result struct {
	code           int
	stdout, stderr string
}

func dshSim(t *testing.T, root string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	if root != "" {
		args = append([]string{"-root", root}, args...)
	}
	code := Main(testSims(), args, &out, &errb)
	return result{code, out.String(), errb.String()}
}

func (r result) golden(t *testing.T, name string) {
	t.Helper()
	harness.Golden(t, "testdata", name, []byte("exit "+itoa(r.code)+"\n-- stdout --\n"+r.stdout+"-- stderr --\n"+r.stderr))
}

func itoa(n int) string { return strconv.Itoa(n) }

func newRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write(t, root, "go.mod", "module github.com/dshsim/dshsim\n")
	write(t, root, "docs/tools.md", "# Fixture\n\n--8<-- \"snapshots/txt/a.txt\"\n")
	return root
}

func write(t *testing.T, root, name, data string) {
	t.Helper()
	harness.MustWrite(t, filepath.Join(root, filepath.FromSlash(name)), data)
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func reset() { alphaLine3, betaFail = "line 3", nil }

func TestHelp(t *testing.T) {
	r := dshSim(t, "", "-h")
	if r.code != 0 || r.stdout != Usage || r.stderr != "" {
		t.Fatalf("-h: %+v", r)
	}
	for _, want := range []string{"-check", "-run PATTERN", "-list", "-render", "DSHSIM_UPDATE=1", "make sim", "1-based, inclusive", "[start:backend-chain]", "Exit status"} {
		if !strings.Contains(Usage, want) {
			t.Errorf("usage does not mention %q", want)
		}
	}
}

// usageCase is a command line and the usage error it draws.
type usageCase struct {
	name string
	args []string
	want string
}

func TestUsageErrors(t *testing.T) {
	tests := []usageCase{
		{"unknown flag", []string{"-bogus"}, "dsh-sim: flag provided but not defined: -bogus\n"},
		{"stray argument", []string{"sandbox"}, "dsh-sim: unexpected argument \"sandbox\"\n"},
		{"two modes", []string{"-check", "-list"}, "dsh-sim: -check, -list and -render are separate modes; give one\n"},
		{"bad regexp", []string{"-run", "("}, "dsh-sim: -run: error parsing regexp: missing closing ): `(`\n"},
		{"page without check", []string{"-page", "p.md"}, "dsh-sim: -page applies to -check only (use -render PAGE to render a page)\n"},
		{"render with run", []string{"-render", "p.md", "-run", "a"}, "dsh-sim: -render runs no sims; -run does not apply\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := dshSim(t, "", tc.args...)
			if r.code != 2 || r.stdout != "" || r.stderr != strings.TrimSuffix(tc.want, "\n")+"; run dsh-sim -h for usage\n" {
				t.Errorf("got %+v, want exit 2 and stderr %q", r, tc.want)
			}
		})
	}
}

func TestList(t *testing.T) {
	dshSim(t, "", "-list").golden(t, "list.golden")
	r := dshSim(t, "", "-list", "-run", "^nothing$")
	if r.code != 1 || !strings.Contains(r.stderr, `no sim matches -run "^nothing$" (sims: alpha, beta)`) {
		t.Errorf("-list with no match: %+v", r)
	}
}

// TestWriteThenCheck is the make sim path: write, write again (nothing
// changes), check (all match).
func TestWriteThenCheck(t *testing.T) {
	reset()
	root := newRoot(t)
	dshSim(t, root).golden(t, "write-first.golden")
	if got := read(t, root, "snapshots/txt/a.txt"); got != "line 1\nwrote <ws>/x\nline 3\nline 4\n" {
		t.Errorf("txt/a.txt = %q", got)
	}
	dshSim(t, root).golden(t, "write-again.golden")
	dshSim(t, root, "-check").golden(t, "check-ok.golden")
}

// TestCheckDrift: a changed line, a missing file and an unclaimed file are
// each reported with file and line, and the exit status is 1.
func TestCheckDrift(t *testing.T) {
	reset()
	root := newRoot(t)
	if r := dshSim(t, root); r.code != 0 {
		t.Fatalf("write: %+v", r)
	}
	alphaLine3 = "line three"
	if err := os.Remove(filepath.Join(root, "snapshots", "txt", "b.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "snapshots/txt/old.txt", "left over\n")
	write(t, root, "snapshots/.gitkeep", "")
	r := dshSim(t, root, "-check")
	r.golden(t, "check-drift.golden")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	// With -run, unclaimed files are only a note and the page is not checked.
	dshSim(t, root, "-check", "-run", "^beta$").golden(t, "check-run-beta.golden")
}

func TestCheckTamperedCopy(t *testing.T) {
	reset()
	root := newRoot(t)
	out := filepath.Join(t.TempDir(), "snap")
	if r := dshSim(t, root, "-o", out); r.code != 0 {
		t.Fatalf("write to -o: %+v", r)
	}
	if r := dshSim(t, root, "-check", "-o", out); r.code != 0 {
		t.Fatalf("check of the fresh copy: %+v", r)
	}
	write(t, out, "out/b.txt", "b full\nb 2 tampered\n")
	r := dshSim(t, root, "-check", "-o", out)
	want := out + "/out/b.txt:2:\n\twant: b 2 tampered\n\tgot:  b 2\n"
	if r.code != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("tampered copy: %+v\nwant stdout to contain %q", r, want)
	}
}

func TestSimFailure(t *testing.T) {
	reset()
	root := newRoot(t)
	betaFail = errors.New("bwrap: setting up uid map: Permission denied")
	r := dshSim(t, root)
	r.golden(t, "write-sim-fails.golden")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	if _, err := os.Stat(filepath.Join(root, "snapshots", "txt", "a.txt")); err != nil {
		t.Errorf("the other sim's file was not written: %v", err)
	}
}

func TestNoSimsIsAFailure(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(nil, []string{"-check", "-root", newRoot(t)}, &out, &errb)
	if code != 1 || out.Len() != 0 || errb.String() != "dsh-sim: no sims in the table (package harness/sims lists them)\n" {
		t.Errorf("no sims: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestBadTableIsAFailure: dsh-sim checks the table it is given before it
// runs anything (harness.CheckSims).
func TestBadTableIsAFailure(t *testing.T) {
	var out, errb bytes.Buffer
	sims := testSims()
	code := Main([]harness.Sim{sims[1], sims[0]}, []string{"-check", "-root", newRoot(t)}, &out, &errb)
	if code != 1 || out.Len() != 0 || !strings.HasPrefix(errb.String(), `dsh-sim: the sim table: sims "beta" and "alpha" are not sorted`) {
		t.Errorf("unsorted table: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func TestRootNotFound(t *testing.T) {
	t.Chdir(t.TempDir())
	r := dshSim(t, "", "-check")
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "no go.mod declaring module github.com/dshsim/dshsim") || !strings.Contains(r.stderr, "give -root") {
		t.Errorf("outside the repository: %+v", r)
	}
}

// TestBadRootOrOut: a -root that is not the repository, or a -o that cannot
// be used, is one usage line naming the flag and the path; no sim runs.
func TestBadRootOrOut(t *testing.T) {
	reset()
	root := newRoot(t)
	file := filepath.Join(root, "go.mod")
	empty := t.TempDir()
	missing := filepath.Join(empty, "nonexistent")
	unreadable := t.TempDir()
	if err := os.Mkdir(filepath.Join(unreadable, "go.mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []usageCase{
		{"-root that does not exist", []string{"-check", "-root", missing}, "-root " + missing + ": no such directory"},
		{"-root that is a file", []string{"-check", "-root", file}, "-root " + file + ": not a directory"},
		{"-root that is an empty directory", []string{"-check", "-root", empty}, "-root " + empty + ": not the repository root (no go.mod declaring module github.com/dshsim/dshsim)"},
		{"-root that is an empty directory, write mode", []string{"-root", empty}, "-root " + empty + ": not the repository root"},
		{"-root whose go.mod cannot be read", []string{"-check", "-root", unreadable}, "-root " + unreadable + ": unreadable (go.mod: is a directory)"},
		{"-o that does not exist, -check", []string{"-check", "-root", root, "-o", missing}, "-o " + missing + ": no such directory (-check compares with the files in it)"},
		{"-o that is a file", []string{"-check", "-root", root, "-o", file}, "-o " + file + ": not a directory"},
		{"-o whose parent does not exist, write mode", []string{"-root", root, "-o", filepath.Join(missing, "snap")}, "-o " + filepath.Join(missing, "snap") + ": its parent " + missing + " is not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			ran := false
			sims := testSims()
			for i := range sims {
				run := sims[i].Run
				sims[i].Run = func(env *harness.Env) (map[string][]byte, error) {
					ran = true
					return run(env)
				}
			}
			code := Main(sims, tc.args, &out, &errb)
			if code != 2 || out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 ||
				!strings.HasPrefix(errb.String(), "dsh-sim: "+tc.want) || !strings.HasSuffix(errb.String(), "; run dsh-sim -h for usage\n") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", code, out.String(), errb.String(), "dsh-sim: "+tc.want)
			}
			if ran {
				t.Error("the sims ran")
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("%s was created", missing)
			}
		})
	}
}

// TestWriteFailureFails: a file that cannot be written fails its sim's line
// and the run, naming the file.
func TestWriteFailureFails(t *testing.T) {
	reset()
	root := newRoot(t)
	write(t, root, "snapshots/out", "a file where the out/ directory belongs\n")
	r := dshSim(t, root)
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL beta  1 of 2 files not written\n") ||
		!strings.Contains(r.stdout, "snapshots/out/b.txt: mkdir ") || !strings.Contains(r.stdout, "dsh-sim: FAIL\n") {
		t.Errorf("write into a file: %+v", r)
	}
	if strings.Contains(r.stdout, "ok   beta") {
		t.Errorf("beta reported ok: %s", r.stdout)
	}
}

// TestPageMustCheckSomething: a missing page and a page without includes
// fail -check instead of passing with nothing checked.
func TestPageMustCheckSomething(t *testing.T) {
	reset()
	root := newRoot(t)
	if r := dshSim(t, root); r.code != 0 {
		t.Fatalf("write: %+v", r)
	}
	noIncludes := filepath.Join(t.TempDir(), "plain.md")
	write(t, noIncludes, "", "# A page\n\nno includes here\n")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"-page without includes", []string{"-check", "-page", noIncludes}, "dsh-sim -check: " + noIncludes + ": no --8<-- includes, nothing to check"},
		{"the default page without includes", []string{"-check"}, "dsh-sim -check: docs/tools.md: no --8<-- includes"},
		{"-page that does not exist", []string{"-check", "-page", noIncludes + ".missing"}, "dsh-sim -check: " + noIncludes + ".missing: missing"},
		{"the default page deleted", []string{"-check"}, "dsh-sim -check: docs/tools.md: missing (the docs page that includes the effect files; -page names another)"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			switch i {
			case 1:
				write(t, root, "docs/tools.md", "# no includes\n")
			case 3:
				if err := os.Remove(filepath.Join(root, "docs", "tools.md")); err != nil {
					t.Fatal(err)
				}
			}
			r := dshSim(t, root, tc.args...)
			if r.code != 1 || !strings.Contains(r.stdout, tc.want) || !strings.Contains(r.stdout, "dsh-sim -check: FAIL") {
				t.Errorf("got %+v, want exit 1 and %q", r, tc.want)
			}
		})
	}
}

const page = `# Fixture

` + "```go" + `
--8<-- "src/chain.go:chain"
` + "```" + `

` + "```text" + `
--8<-- "snapshots/txt/a.txt:2:3"
` + "```" + `

??? abstract "full output"

    --8<-- "snapshots/out/b.txt"
`

const chainGo = `package src

func chain() []string {
	// --8<-- [start:chain]
	return []string{"bwrap", "landlock"}
	// --8<-- [end:chain]
}
`

// TestDocsPage: -check resolves the page's includes against the fresh run;
// a stale range, a moved section and an unproduced snapshot file are errors
// naming the page line; -render expands the page.
func TestDocsPage(t *testing.T) {
	reset()
	root := newRoot(t)
	write(t, root, "docs/tools.md", page)
	write(t, root, "src/chain.go", chainGo)
	if r := dshSim(t, root); r.code != 0 {
		t.Fatalf("write: %+v", r)
	}
	dshSim(t, root, "-check").golden(t, "docs-ok.golden")

	rendered := filepath.Join(t.TempDir(), "out.md")
	if r := dshSim(t, root, "-render", filepath.Join(root, "docs", "tools.md"), "-o", rendered); r.code != 0 {
		t.Fatalf("-render: %+v", r)
	}
	harness.Golden(t, "testdata", "docs-rendered.md.golden", []byte(read(t, rendered, "")))

	// Break it three ways: the fresh run changes an included line, the
	// section marker moves away, and the page includes a file no sim makes.
	alphaLine3 = "line three"
	write(t, root, "src/chain.go", strings.ReplaceAll(chainGo, "chain]", "backends]"))
	write(t, root, "docs/tools.md", page+"\n--8<-- \"snapshots/txt/nobody.txt\"\n")
	write(t, root, "snapshots/txt/nobody.txt", "x\n")
	r := dshSim(t, root, "-check")
	r.golden(t, "docs-broken.golden")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	r = dshSim(t, root, "-render", filepath.Join(root, "docs", "tools.md"))
	if r.code != 1 || !strings.Contains(r.stderr, `tools.md:4: --8<-- "src/chain.go:chain": no section "chain" in src/chain.go`) {
		t.Errorf("-render of a broken page: %+v", r)
	}
}

// TestNothingMatched: a -run that selects no sim is the same in every mode
// that selects sims: one line on stderr naming the pattern and the sims
// there are, nothing on stdout, exit 1, no sim run and nothing written.
func TestNothingMatched(t *testing.T) {
	reset()
	root := newRoot(t)
	const want = "dsh-sim: no sim matches -run \"^zzz$\" (sims: alpha, beta)\n"
	for _, args := range [][]string{{"-run", "^zzz$"}, {"-check", "-run", "^zzz$"}, {"-list", "-run", "^zzz$"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := dshSim(t, root, args...)
			if r.code != 1 || r.stdout != "" || r.stderr != want {
				t.Errorf("got %+v, want exit 1, no stdout, stderr %q", r, want)
			}
			if _, err := os.Stat(filepath.Join(root, "snapshots")); err == nil {
				t.Error("snapshots/ was written")
			}
		})
	}
}

// TestRootInEveryMode: a -root that is not the repository is refused the
// same way by -list as by -check and the write mode (-render alone takes
// any directory); -list refuses -o, which it would ignore.
func TestRootInEveryMode(t *testing.T) {
	empty := t.TempDir()
	missing := filepath.Join(empty, "nonexistent")
	for _, args := range [][]string{{"-list"}, {"-check"}, {}} {
		for _, bad := range []struct{ dir, want string }{
			{missing, "-root " + missing + ": no such directory"},
			{empty, "-root " + empty + ": not the repository root"},
		} {
			r := dshSim(t, "", append(args, "-root", bad.dir)...)
			if r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "dsh-sim: "+bad.want) {
				t.Errorf("%v -root %s: got %+v, want a usage error starting %q", args, bad.dir, r, bad.want)
			}
		}
	}
	if r := dshSim(t, newRoot(t), "-list"); r.code != 0 {
		t.Errorf("-list -root of the repository: %+v", r)
	}
	r := dshSim(t, "", "-list", "-o", t.TempDir())
	if r.code != 2 || r.stderr != "dsh-sim: -list writes nothing; -o does not apply; run dsh-sim -h for usage\n" {
		t.Errorf("-list -o: %+v", r)
	}
}

// TestRenderChecksPathsFirst: -render refuses a page that is missing, a
// directory or not text (a NUL byte, invalid UTF-8), and an -o whose
// directory does not exist, as usage errors before it reads any include;
// a text page in UTF-8 renders.
func TestRenderChecksPathsFirst(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "text.md", "# Übersicht\n\nplain text\n")
	write(t, dir, "nul.md", "# Page\n\x00binary\n")
	write(t, dir, "latin1.md", "# \xdcbersicht\n")
	p := func(name string) string { return filepath.Join(dir, name) }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing page", []string{"-render", p("none.md")}, "-render " + p("none.md") + ": no such file"},
		{"a directory", []string{"-render", dir}, "-render " + dir + ": is a directory"},
		{"a NUL byte", []string{"-render", p("nul.md")}, "-render " + p("nul.md") + ": not a text file (a NUL byte at offset 7)"},
		{"invalid UTF-8", []string{"-render", p("latin1.md")}, "-render " + p("latin1.md") + ": not a text file (invalid UTF-8 at offset 2)"},
		{"-o without its directory", []string{"-render", p("text.md"), "-o", p("no/out.md")}, "-o " + p("no/out.md") + ": its parent " + p("no") + " is not a directory"},
		{"-o a directory", []string{"-render", p("text.md"), "-o", dir}, "-o " + dir + ": is a directory"},
		{"-o the page", []string{"-render", p("text.md"), "-o", p("text.md")}, "-o " + p("text.md") + ": is the page -render reads"},
		{"-o a link to the page", []string{"-render", p("text.md"), "-o", p("link.md")}, "-o " + p("link.md") + ": is the page -render reads"},
	}
	if err := os.Symlink("text.md", p("link.md")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := dshSim(t, dir, tc.args...)
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "dsh-sim: "+tc.want) {
				t.Errorf("got %+v, want a usage error starting %q", r, "dsh-sim: "+tc.want)
			}
		})
	}
	if r := dshSim(t, dir, "-render", p("text.md")); r.code != 0 || r.stdout != "# Übersicht\n\nplain text\n" {
		t.Errorf("a UTF-8 page: %+v", r)
	}
	if got := read(t, dir, "text.md"); got != "# Übersicht\n\nplain text\n" {
		t.Errorf("the page was written: %q", got)
	}
}

// TestRenderWritesOnlyO: -render writes -o and nothing else: an -o that is
// a file the page includes (a source, an effect file under -o's snapshots,
// through a link too) is a usage error and every file stays as it was.
func TestRenderWritesOnlyO(t *testing.T) {
	root := newRoot(t)
	write(t, root, "src/a.go", "package src\n\n// --8<-- [start:s]\nvar A = 1\n// --8<-- [end:s]\n")
	write(t, root, "snapshots/txt/a.txt", "effect\n")
	write(t, root, "page.md", "--8<-- \"src/a.go:s\"\n--8<-- \"snapshots/txt/a.txt\"\n")
	if err := os.Symlink(filepath.Join(root, "snapshots", "txt", "a.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"src/a.go": read(t, root, "src/a.go"), "snapshots/txt/a.txt": "effect\n", "page.md": read(t, root, "page.md")}
	for _, tc := range []struct{ out, want string }{
		{"src/a.go", "is src/a.go, which the page includes"},
		{"snapshots/txt/a.txt", "is snapshots/txt/a.txt, which the page includes"},
		{"link.txt", "is snapshots/txt/a.txt, which the page includes"},
	} {
		out := filepath.Join(root, tc.out)
		r := dshSim(t, root, "-render", filepath.Join(root, "page.md"), "-o", out)
		if r.code != 2 || r.stdout != "" || r.stderr != "dsh-sim: -o "+out+": "+tc.want+" (write the expanded page elsewhere); run dsh-sim -h for usage\n" {
			t.Errorf("-o %s: %+v, want a usage error: %s", tc.out, r, tc.want)
		}
	}
	for name, data := range files {
		if got := read(t, root, name); got != data {
			t.Errorf("%s was written: %q", name, got)
		}
	}
	out := filepath.Join(root, "out.md")
	if r := dshSim(t, root, "-render", filepath.Join(root, "page.md"), "-o", out); r.code != 0 || read(t, root, "out.md") != "var A = 1\neffect\n" {
		t.Errorf("-o out.md: %+v, %q", r, read(t, root, "out.md"))
	}
}

// includeSpec is the quoted path of an include line of an example.
var includeSpec = regexp.MustCompile(`^\s*(?://\s*)?--8<-- "([^"]+)"`)

// TestExampleIncludesResolve keeps the include examples true: every include
// line of dsh-sim -h, docs/goldens.md and package snippets' manual names a
// file (and a line range or a section) of the repository.
func TestExampleIncludesResolve(t *testing.T) {
	root := harness.Root(t)
	texts := map[string]string{"dsh-sim -h": Usage}
	for _, f := range []string{"docs/goldens.md", "harness/snippets/doc.go"} {
		texts[f] = read(t, root, f)
	}
	src := PageSource(root, filepath.Join(root, harness.SnapshotsDir), nil, nil)
	for name, text := range texts {
		var page strings.Builder
		n := 0
		for _, line := range strings.Split(text, "\n") {
			if m := includeSpec.FindStringSubmatch(line); m != nil {
				fmt.Fprintf(&page, "--8<-- %q\n", m[1])
				n++
			}
		}
		res, err := snippets.Check(name, []byte(page.String()), src)
		if err != nil || n < 3 || res.Includes != n {
			t.Errorf("%s: %d of %d example includes resolve: %v", name, res.Includes, n, err)
		}
	}
}

// TestNextRunRemovesKilledRunsDirectories kills a dsh-sim run (SIGKILL: no
// cleanup runs) while another run is alive; the next run removes the killed
// run's temporary and scratch directories, saying so on stderr, and leaves
// the live run's alone.
func TestNextRunRemovesKilledRunsDirectories(t *testing.T) {
	reset()
	root := newRoot(t)
	tmp := t.TempDir()
	scratch := sandboxtest.TempDir(t, "dshsim-simcli-kill-")
	start := func() (*exec.Cmd, []string) {
		before := runDirs(tmp, scratch)
		cmd := exec.Command(os.Args[0], "-root", root, "-run", "block")
		cmd.Env = append(os.Environ(), mainEnv+"=1", "TMPDIR="+tmp, sandboxtest.ScratchEnv+"="+scratch)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		var made []string
		waittest.Until(t, 10*time.Millisecond, "a dsh-sim run to make its temporary and scratch directories", func() bool {
			made = nil
			for _, d := range runDirs(tmp, scratch) {
				if !slices.Contains(before, d) {
					made = append(made, d)
				}
			}
			return len(made) == 2
		})
		return cmd, made
	}
	killed, dead := start()
	_, live := start()
	if err := killed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waittest.Exit(t, killed, "the killed dsh-sim run")
	if got := runDirs(tmp, scratch); len(got) != 4 {
		t.Fatalf("after the kill: %v, want both runs' directories", got)
	}

	t.Setenv("TMPDIR", tmp)
	t.Setenv(sandboxtest.ScratchEnv, scratch)
	r := dshSim(t, root, "-run", "alpha")
	if r.code != 0 {
		t.Fatalf("the next run: %+v", r)
	}
	for _, d := range dead {
		if !strings.Contains(r.stderr, "dsh-sim: removed "+d+", left by a killed run\n") {
			t.Errorf("stderr %q does not name %s", r.stderr, d)
		}
	}
	if got := runDirs(tmp, scratch); !slices.Equal(got, live) {
		t.Errorf("after the next run: %v, want the live run's %v only", got, live)
	}
	for _, d := range dead {
		if _, err := os.Lstat(d + ".lock"); !os.IsNotExist(err) {
			t.Errorf("%s.lock: %v, want it removed with its directory", d, err)
		}
	}
}

// runDirs lists the run directories in the given parents (not their lock
// files), sorted.
func runDirs(parents ...string) []string {
	var dirs []string
	for _, p := range parents {
		m, _ := filepath.Glob(filepath.Join(p, harness.RunDirPrefix+"*"))
		for _, d := range m {
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	slices.Sort(dirs)
	return dirs
}
