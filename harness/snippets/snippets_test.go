package snippets

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dshsim/dshsim/harness"
	"github.com/google/go-cmp/cmp"
)

func dirSource(dir string) Source {
	return Source{Read: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))) }}
}

func mapSource(files map[string]string) Source {
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return Source{Read: func(p string) ([]byte, error) { return fs.ReadFile(m, p) }}
}

// fixture is the fixture page, which includes files of testdata/.
const fixture = "testdata/page.md"

func fixturePage(t testing.TB) []byte {
	t.Helper()
	page, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// TestRenderFixturePage expands the fixture page: a Go section (nested
// markers dropped), a range, an open-ended range, and an indented whole file.
func TestRenderFixturePage(t *testing.T) {
	out, err := Render(fixture, fixturePage(t), dirSource("testdata"))
	if err != nil {
		t.Fatal(err)
	}
	harness.Golden(t, "testdata", "page.rendered.md", out)
	if strings.Contains(string(out), Marker) {
		t.Errorf("rendered page still contains %s:\n%s", Marker, out)
	}
}

func TestCheckFixturePage(t *testing.T) {
	res, err := Check(fixture, fixturePage(t), dirSource("testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Includes: 4}); res != want {
		t.Errorf("Check = %+v, want %+v", res, want)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, line string
		want       Include
	}{
		{"whole file", `--8<-- "a/b.txt"`, Include{Line: 1, Spec: "a/b.txt", Path: "a/b.txt"}},
		{"range is 1-based inclusive", `--8<-- "a.txt:1:28"`, Include{Line: 1, Spec: "a.txt:1:28", Path: "a.txt", Start: 1, End: 28}},
		{"open range runs to the end", `--8<-- "a.txt:46"`, Include{Line: 1, Spec: "a.txt:46", Path: "a.txt", Start: 46, End: -1}},
		{"named section", `--8<-- "sandbox/backends.go:backend-chain"`, Include{Line: 1, Spec: "sandbox/backends.go:backend-chain", Path: "sandbox/backends.go", Section: "backend-chain"}},
		{"single quotes", `--8<-- 'a.txt'`, Include{Line: 1, Spec: "a.txt", Path: "a.txt"}},
		{"indent is kept", "    --8<-- \"a.txt\"", Include{Line: 1, Indent: "    ", Spec: "a.txt", Path: "a.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("p.md", []byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]Include{tc.want}, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tc.line, diff)
			}
		})
	}
}

// TestErrorsNamePageLine feeds broken pages; each error must name the page
// line of the include and say what is wrong.
func TestErrorsNamePageLine(t *testing.T) {
	files := map[string]string{
		"a.txt":  "one\ntwo\nthree\n",
		"s.go":   "// --8<-- [start:x]\nx\n// --8<-- [end:x]\n// --8<-- [start:open]\n// --8<-- [start:dup]\n// --8<-- [end:dup]\n// --8<-- [start:dup]\n// --8<-- [end:dup]\n",
		"e.go":   "// --8<-- [end:early]\n// --8<-- [start:early]\n",
		"empty":  "",
		"sub/ok": "ok\n",
	}
	tests := []struct {
		name, line, want string
	}{
		{"missing file", `--8<-- "nope.txt"`, `p.md:3: --8<-- "nope.txt": missing file nope.txt`},
		{"range past the end", `--8<-- "a.txt:2:4"`, `p.md:3: --8<-- "a.txt:2:4": line range 2:4 is past the end of a.txt (3 lines)`},
		{"start past the end", `--8<-- "a.txt:9"`, `p.md:3: --8<-- "a.txt:9": line range 9:3 is past the end of a.txt (3 lines)`},
		{"range in an empty file", `--8<-- "empty:1:1"`, `p.md:3: --8<-- "empty:1:1": line range 1:1 is past the end of empty (0 lines)`},
		{"reversed range", `--8<-- "a.txt:3:2"`, `p.md:3: --8<-- "a.txt:3:2": bad line range 3:2 (1-based, inclusive, start <= end)`},
		{"line zero", `--8<-- "a.txt:0:2"`, `p.md:3: --8<-- "a.txt:0:2": bad line range 0:2 (1-based, inclusive, start <= end)`},
		{"missing section", `--8<-- "s.go:moved"`, `p.md:3: --8<-- "s.go:moved": no section "moved" in s.go (mark it with --8<-- [start:moved] and --8<-- [end:moved] comments)`},
		{"unclosed section", `--8<-- "s.go:open"`, `p.md:3: --8<-- "s.go:open": section "open" in s.go starts on line 4 and never ends`},
		{"duplicated section", `--8<-- "s.go:dup"`, `p.md:3: --8<-- "s.go:dup": section "dup" starts twice in s.go (lines 5 and 7)`},
		{"end before start", `--8<-- "e.go:early"`, `p.md:3: --8<-- "e.go:early": section "early" ends on line 1 of e.go before it starts`},
		{"no quotes", `--8<-- a.txt`, `p.md:3: malformed include "--8<-- a.txt": want --8<-- "path", "path:start:end" or "path:section"`},
		{"bare marker", `--8<--`, `p.md:3: malformed include "--8<--": want --8<-- "path", "path:start:end" or "path:section"`},
		{"absolute path", `--8<-- "/etc/passwd"`, `p.md:3: --8<-- "/etc/passwd": path must be clean, relative to the repository root and inside it`},
		{"path escapes the root", `--8<-- "../x.txt"`, `p.md:3: --8<-- "../x.txt": path must be clean, relative to the repository root and inside it`},
		{"unclean path", `--8<-- "sub/../a.txt"`, `p.md:3: --8<-- "sub/../a.txt": path must be clean, relative to the repository root and inside it`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := []byte("# p\n\n" + tc.line + "\n")
			_, cerr := Check("p.md", page, mapSource(files))
			_, rerr := Render("p.md", page, mapSource(files))
			for what, err := range map[string]error{"Check": cerr, "Render": rerr} {
				if err == nil {
					t.Fatalf("%s: no error", what)
				}
				var es Errors
				if !errors.As(err, &es) || len(es) != 1 {
					t.Fatalf("%s: want one Error, got %#v", what, err)
				}
				if got := err.Error(); got != tc.want {
					t.Errorf("%s error:\n got %s\nwant %s", what, got, tc.want)
				}
			}
		})
	}
}

// TestCheckCollectsAllProblems: two broken includes give two errors, page order.
func TestCheckCollectsAllProblems(t *testing.T) {
	page := []byte("--8<-- \"x\"\nok\n--8<-- \"y:1:2\"\n")
	_, err := Check("p.md", page, mapSource(map[string]string{"y": "1\n"}))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 || es[0].Line != 1 || es[1].Line != 3 {
		t.Fatalf("want errors on lines 1 and 3, got %v", err)
	}
}

// TestCheckFresh: an include whose selected lines differ from the fresh run
// is stale and the error shows the first differing line; lines outside the
// selected range may change freely; a fresh file shorter than the range is an
// error; a path the fresh run can never produce is an error.
func TestCheckFresh(t *testing.T) {
	committed := map[string]string{"snap/a.txt": "1\n2\n3\n4\n", "snap/orphan.txt": "x\n"}
	tests := []struct {
		name, line, fresh, want string
		wantFresh               int
	}{
		{"identical", `--8<-- "snap/a.txt"`, "1\n2\n3\n4\n", "", 1},
		{"change outside the range is fine", `--8<-- "snap/a.txt:1:2"`, "1\n2\nthree\n4\n", "", 1},
		{"change inside the range is stale", `--8<-- "snap/a.txt:2:3"`, "1\n2\nthree\n4\n",
			"p.md:1: --8<-- \"snap/a.txt:2:3\": stale against the fresh run (1 line(s) differ): included line 2 (snap/a.txt:3)\n\twant: 3\n\tgot:  three", 1},
		{"whole file stale", `--8<-- "snap/a.txt"`, "1\n2\n3\n",
			"p.md:1: --8<-- \"snap/a.txt\": stale against the fresh run (1 line(s) differ): included line 4 (snap/a.txt:4)\n\twant: 4\n\tgot:  (end of include)", 1},
		{"fresh run shorter than the range", `--8<-- "snap/a.txt:3:4"`, "1\n2\n3\n",
			`p.md:1: --8<-- "snap/a.txt:3:4": stale: in the fresh run, line range 3:4 is past the end of snap/a.txt (3 lines)`, 1},
		{"no sim produces it", `--8<-- "snap/orphan.txt"`, "", `p.md:1: --8<-- "snap/orphan.txt": no registered sim produces snap/orphan.txt`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := mapSource(committed)
			src.Fresh = func(p string) ([]byte, bool, error) {
				if p == "snap/orphan.txt" {
					return nil, false, errors.New("no registered sim produces snap/orphan.txt")
				}
				return []byte(tc.fresh), true, nil
			}
			res, err := Check("p.md", []byte(tc.line+"\n"), src)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Check error:\n got %s\nwant %s", got, tc.want)
			}
			if res.Fresh != tc.wantFresh {
				t.Errorf("Fresh = %d, want %d", res.Fresh, tc.wantFresh)
			}
		})
	}
}

// FuzzParseRender: no page makes Parse or Render panic, every parsed
// include has a clean relative path, and Render of a page without includes is
// the page itself. Seeded from the fixture page.
func FuzzParseRender(f *testing.F) {
	f.Add(string(fixturePage(f)))
	f.Add("--8<-- \"a:1:2\"\n  --8<-- 'b:sec'\n--8<--\n")
	f.Add("no includes\nat all\n")
	src := mapSource(map[string]string{"a": "1\n2\n3\n", "b": "// --8<-- [start:sec]\nx\n// --8<-- [end:sec]\n"})
	f.Fuzz(func(t *testing.T, page string) {
		incs, _ := Parse("p.md", []byte(page))
		for _, inc := range incs {
			if !fs.ValidPath(inc.Path) || inc.Line < 1 {
				t.Fatalf("include %+v: bad path or line", inc)
			}
		}
		out, err := Render("p.md", []byte(page), src)
		if err == nil && len(incs) == 0 && string(out) != page {
			t.Fatalf("Render changed a page without includes:\n%q\n%q", page, out)
		}
	})
}
