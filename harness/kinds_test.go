package harness

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
)

// kindsFile is where every event kind is spelled: the only non-test file
// that may hold one as a string literal.
const kindsFile = "pipeline/session/kinds.go"

// kindLiterals returns, one line each ("file:line: kind"), the string
// literals of f whose value is one of kinds, unless f is kindsFile.
// Comments are not literals; a struct tag's value is the whole tag.
func kindLiterals(fset *token.FileSet, f *ast.File, kinds []string) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		pos := fset.Position(lit.Pos())
		if v, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(kinds, v) && pos.Filename != kindsFile {
			out = append(out, fmt.Sprintf("%s:%d: %q is spelled here: use session's constant", pos.Filename, pos.Line, v))
		}
		return true
	})
	return out
}

// TestEventKindsAreSpelledOnce: every event kind is spelled once in the
// module's non-test code, as a constant of pipeline/session (kinds.go);
// everywhere else names it. A string literal of a kind anywhere else fails,
// named by its file and line (tests may spell kinds: they state data).
func TestEventKindsAreSpelledOnce(t *testing.T) {
	kinds := session.Kinds()
	declared := 0
	walkSources(t, Root(t), func(fset *token.FileSet, pkg string, f *ast.File) {
		if fset.Position(f.Pos()).Filename == kindsFile {
			declared++
		}
		for _, line := range kindLiterals(fset, f, kinds) {
			t.Error(line)
		}
	})
	if declared != 1 {
		t.Fatalf("%s was walked %d times: the walk is broken", kindsFile, declared)
	}
}

// TestKindLiteralsAreFound plants kinds in a small file: a literal in code,
// in a composite key and in a case clause is reported; a comment, a tag, a
// longer string that mentions a kind and kinds.go itself are not.
func TestKindLiteralsAreFound(t *testing.T) {
	src := `package p

// a comment about "tool/call" events
type T struct {
	A string ` + "`json:\"tool/call\"`" + `
}

var m = map[string]bool{"turn/start": true}

func f(typ string) string {
	switch typ {
	case "turn/end":
		return "append tool/result to the log"
	}
	return "user/message"
}
`
	parse := func(name string) (*token.FileSet, *ast.File) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		return fset, f
	}
	fset, f := parse("x/p.go")
	got := kindLiterals(fset, f, session.Kinds())
	want := []string{
		`x/p.go:8: "turn/start" is spelled here: use session's constant`,
		`x/p.go:12: "turn/end" is spelled here: use session's constant`,
		`x/p.go:15: "user/message" is spelled here: use session's constant`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("found\n%q\nwant\n%q", got, want)
	}
	if fset, f := parse(kindsFile); len(kindLiterals(fset, f, session.Kinds())) != 0 {
		t.Errorf("%s itself was reported", kindsFile)
	}
}
