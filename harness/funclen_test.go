package harness

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a non-test function may span, from its
// func keyword to its closing brace: a function a reader can hold.
const maxFuncLines = 100

// longFuncAllowed names the functions that may be longer, each with why.
// A name is the package directory, module relative, then the function as
// go/ast spells it: "pkg.Func", "pkg.(*T).Method", a literal as "pkg.Func.func".
var longFuncAllowed = map[string]string{
	"tools/code/compile.lex": "the code-mode lexer: one switch over the next character, each case a few lines",
}

// funcSpan is one function of a file: its name and the lines it spans.
type funcSpan struct {
	name  string // as in longFuncAllowed
	where string // file:line
	lines int
}

// funcSpans lists every function declaration and literal of f, literals
// named after the function they stand in ("pkg.F.func", "pkg.F.func.func").
func funcSpans(fset *token.FileSet, pkg string, f *ast.File) []funcSpan {
	var spans []funcSpan
	var visit func(n ast.Node, name string)
	add := func(n ast.Node, name string) {
		start, end := fset.Position(n.Pos()), fset.Position(n.End())
		spans = append(spans, funcSpan{name: name, where: fmt.Sprintf("%s:%d", start.Filename, start.Line), lines: end.Line - start.Line + 1})
	}
	visit = func(n ast.Node, name string) {
		ast.Inspect(n, func(m ast.Node) bool {
			if lit, ok := m.(*ast.FuncLit); ok && m != n {
				add(lit, name+".func")
				visit(lit, name+".func")
				return false
			}
			return true
		})
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			name := pkg + "." + funcName(fd)
			add(fd, name)
			visit(fd, name)
		} else {
			visit(d, pkg) // a literal in a package-level var
		}
	}
	return spans
}

// funcName is "F", "T.M" or "(*T).M".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := false
	if s, ok := t.(*ast.StarExpr); ok {
		t, star = s.X, true
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	recv := fmt.Sprint(t)
	if star {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}

// walkSources parses every non-test Go file under root (testdata, hidden
// directories, bin and build skipped), named by its module-relative path,
// and calls fn with its package directory, module relative.
func walkSources(t *testing.T, root string, fn func(fset *token.FileSet, pkg string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || p == filepath.Join(root, "bin") || p == filepath.Join(root, "build")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, filepath.ToSlash(rel), src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fn(fset, filepath.ToSlash(filepath.Dir(rel)), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// longFunctions returns the functions of spans over maxFuncLines that
// allowed does not name, and the names of allowed that name no such
// function (an allowance left behind), one line each, sorted.
func longFunctions(spans []funcSpan, allowed map[string]string) (long, stale []string) {
	over := map[string]bool{}
	for _, s := range spans {
		if s.lines <= maxFuncLines {
			continue
		}
		over[s.name] = true
		if _, ok := allowed[s.name]; !ok {
			long = append(long, fmt.Sprintf("%s: %s is %d lines (at most %d): split it into named steps", s.where, s.name, s.lines, maxFuncLines))
		}
	}
	for name := range allowed {
		if !over[name] {
			stale = append(stale, name+" is allowed to be long but is not over "+fmt.Sprint(maxFuncLines)+" lines (or is gone): remove it from longFuncAllowed")
		}
	}
	sort.Strings(long)
	sort.Strings(stale)
	return long, stale
}

// TestNoLongFunctions fails on a non-test function (declaration or
// literal) over maxFuncLines lines that longFuncAllowed does not name, and on
// an allowance no function needs any more.
func TestNoLongFunctions(t *testing.T) {
	root := Root(t)
	var spans []funcSpan
	walkSources(t, root, func(fset *token.FileSet, pkg string, f *ast.File) {
		spans = append(spans, funcSpans(fset, pkg, f)...)
	})
	if len(spans) < 1000 {
		t.Fatalf("only %d functions found under %s: the walk is broken", len(spans), root)
	}
	long, stale := longFunctions(spans, longFuncAllowed)
	for _, line := range append(long, stale...) {
		t.Error(line)
	}
}

// TestLongFunctionsAreFound plants functions of 100 and 101 lines, as a
// declaration, a method and a literal: the 101-line ones must be reported,
// the 100-line ones and an allowed one must not, and an allowance that
// covers nothing must be named.
func TestLongFunctionsAreFound(t *testing.T) {
	body := func(lines int) string { // a body spanning lines, braces included
		return "{\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	src := "package p\n\ntype T struct{}\n\n" +
		"func Short() " + body(100) +
		"func Long() " + body(101) +
		"func (*T) Long() " + body(101) +
		"func Allowed() " + body(150) +
		"var v = func() " + body(101) +
		"func Outer() {\n\tf := func() " + body(101) + "\t_ = f\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	long, stale := longFunctions(funcSpans(fset, "x/p", f), map[string]string{"x/p.Allowed": "", "x/p.Gone": ""})
	want := []string{"x/p.(*T).Long", "x/p.Long", "x/p.Outer", "x/p.Outer.func", "x/p.func"}
	var got []string
	for _, l := range long {
		got = append(got, strings.Fields(l)[1])
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("reported %q, want %q:\n%s", got, want, strings.Join(long, "\n"))
	}
	if len(stale) != 1 || !strings.HasPrefix(stale[0], "x/p.Gone ") {
		t.Errorf("stale allowances %q, want x/p.Gone alone", stale)
	}
}

// deferredResults lists the deferred closures of f that assign a named
// result of the function they are deferred in, one "file:line: name" each:
// the result is then decided after the function's last line, where a
// reader does not look. A closure that calls recover() is the exception:
// turning a panic into a result is the one thing Go leaves no other way to
// do.
func deferredResults(fset *token.FileSet, pkg string, f *ast.File) []string {
	var bad []string
	var check func(body *ast.BlockStmt, typ *ast.FuncType, name string)
	check = func(body *ast.BlockStmt, typ *ast.FuncType, name string) {
		if body == nil {
			return
		}
		results := map[string]bool{}
		if typ.Results != nil {
			for _, field := range typ.Results.List {
				for _, n := range field.Names {
					results[n.Name] = true
				}
			}
		}
		ast.Inspect(body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncLit:
				check(x.Body, x.Type, name+".func")
				return false
			case *ast.DeferStmt:
				lit, ok := x.Call.Fun.(*ast.FuncLit)
				if !ok {
					return true
				}
				if !callsRecover(lit) {
					for _, r := range assigned(lit, results) {
						bad = append(bad, fmt.Sprintf("%s: %s: a deferred closure assigns the result %s", fset.Position(x.Pos()), name, r))
					}
				}
				check(lit.Body, lit.Type, name+".func")
				return false
			}
			return true
		})
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			check(fd.Body, fd.Type, pkg+"."+funcName(fd))
		}
	}
	return bad
}

// callsRecover reports whether lit calls recover().
func callsRecover(lit *ast.FuncLit) bool {
	found := false
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "recover" {
				found = true
			}
		}
		return !found
	})
	return found
}

// assigned lists the names of results that lit assigns (=, +=, ...), in
// order, outside closures of its own.
func assigned(lit *ast.FuncLit, results map[string]bool) []string {
	var names []string
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				return true
			}
			for _, l := range x.Lhs {
				if id, ok := l.(*ast.Ident); ok && results[id.Name] {
					names = append(names, id.Name)
				}
			}
		}
		return true
	})
	return names
}

// TestNoResultFilledByADeferredClosure fails on a deferred closure that
// assigns its function's named result (a panic's recovery aside).
func TestNoResultFilledByADeferredClosure(t *testing.T) {
	root := Root(t)
	walkSources(t, root, func(fset *token.FileSet, pkg string, f *ast.File) {
		for _, line := range deferredResults(fset, pkg, f) {
			t.Error(line)
		}
	})
}

// TestResultsFilledByDeferredClosuresAreFound plants a deferred closure that
// fills a named result, one in a literal, one that fills it with +=, and the
// allowed shapes: a recovery, a closure assigning its own local, a deferred
// call that is not a closure.
func TestResultsFilledByDeferredClosuresAreFound(t *testing.T) {
	src := `package p

func Read() (data []byte, err error) {
	defer func() { data = nil }()
	return nil, nil
}

func Count() (n int) {
	defer func() {
		if true {
			n += 1
		}
	}()
	return 0
}

func Outer() {
	_ = func() (err error) {
		defer func() { err = nil }()
		return nil
	}
}

func Recovered() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = nil
		}
	}()
	return nil
}

func Local() (err error) {
	defer func() {
		var e error
		e = nil
		_ = e
		err := e
		_ = err
	}()
	return nil
}

func Plain() (err error) {
	defer close(nil)
	return nil
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := deferredResults(fset, "x/p", f)
	want := []string{
		"p.go:4:2: x/p.Read: a deferred closure assigns the result data",
		"p.go:9:2: x/p.Count: a deferred closure assigns the result n",
		"p.go:19:3: x/p.Outer.func: a deferred closure assigns the result err",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
