package harness

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"
)

// maxStructFields is the most fields a non-test struct type may declare
// (an embedded group counts as one): a struct a reader can hold, its
// fields grouped by concern past that.
const maxStructFields = 15

// wideStructAllowed names the struct types that may declare more, each
// with why, as "pkg.Type" (the package directory, module relative).
var wideStructAllowed = map[string]string{}

// structWidths lists every struct type of f declared at any depth (a
// type in a function too) with its field count, "pkg.Type" each, the
// widest where two types share a name (types local to two functions); an
// anonymous struct is counted within the type that holds it, not alone.
func structWidths(pkg string, f *ast.File) map[string]int {
	widths := map[string]int{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return true
		}
		c := 0
		for _, field := range st.Fields.List {
			c += max(1, len(field.Names))
		}
		name := pkg + "." + ts.Name.Name
		widths[name] = max(widths[name], c)
		return true
	})
	return widths
}

// wideStructs returns the structs of widths over maxStructFields that
// allowed does not name, and the allowances that name no such struct, one
// line each, sorted.
func wideStructs(widths map[string]int, allowed map[string]string) (wide, stale []string) {
	for name, n := range widths {
		if _, ok := allowed[name]; n > maxStructFields && !ok {
			wide = append(wide, fmt.Sprintf("%s declares %d fields (at most %d): group them by concern in embedded structs", name, n, maxStructFields))
		}
	}
	for name := range allowed {
		if widths[name] <= maxStructFields {
			stale = append(stale, name+" is allowed to be wide but declares at most "+fmt.Sprint(maxStructFields)+" fields (or is gone): remove it from wideStructAllowed")
		}
	}
	sort.Strings(wide)
	sort.Strings(stale)
	return wide, stale
}

// TestNoWideStructs fails on a non-test struct type of more than
// maxStructFields fields that wideStructAllowed does not name, and on an
// allowance no struct needs any more.
func TestNoWideStructs(t *testing.T) {
	widths := map[string]int{}
	walkSources(t, Root(t), func(_ *token.FileSet, pkg string, f *ast.File) {
		for name, n := range structWidths(pkg, f) {
			widths[name] = max(widths[name], n)
		}
	})
	if len(widths) < 300 {
		t.Fatalf("only %d struct types found: the walk is broken", len(widths))
	}
	wide, stale := wideStructs(widths, wideStructAllowed)
	for _, line := range append(wide, stale...) {
		t.Error(line)
	}
}

// TestWideStructsAreFound plants structs of 15 and 16 fields (names in
// one list counted one by one, an embedded group as one, a type inside a
// function too, a narrower one of the same name after it): the 16-field
// ones must be reported, the 15-field one and an allowed one not, and an
// allowance that covers nothing must be named.
func TestWideStructsAreFound(t *testing.T) {
	fields := func(n int) string {
		var b strings.Builder
		b.WriteString("\ta, b int\n\tGroup\n") // three
		for i := 3; i < n; i++ {
			fmt.Fprintf(&b, "\tf%d int\n", i)
		}
		return b.String()
	}
	src := "package p\n\ntype Group struct{}\n\n" +
		"type Fifteen struct {\n" + fields(15) + "}\n\n" +
		"type Sixteen struct {\n" + fields(16) + "}\n\n" +
		"type Allowed struct {\n" + fields(20) + "}\n\n" +
		"func f() {\n\ttype inner struct {\n" + fields(16) + "\t}\n\t_ = inner{}\n}\n" +
		"func g() {\n\ttype inner struct {\n" + fields(3) + "\t}\n\t_ = inner{}\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	wide, stale := wideStructs(structWidths("x/p", f), map[string]string{"x/p.Allowed": "", "x/p.Gone": ""})
	var got []string
	for _, l := range wide {
		got = append(got, strings.Fields(l)[0])
	}
	if want := []string{"x/p.Sixteen", "x/p.inner"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("reported %q, want %q:\n%s", got, want, strings.Join(wide, "\n"))
	}
	if len(stale) != 1 || !strings.HasPrefix(stale[0], "x/p.Gone ") {
		t.Errorf("stale allowances %q, want x/p.Gone alone", stale)
	}
}
