package harness

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Comments and docs stand on their own: a maintainer who clones the
// repository can follow every file they cite. A comment of a .go file (doc.go
// manuals included) or of a script (Makefile, .ci/run, shell, Python,
// JavaScript, TypeScript, YAML) names no .md file that is not in the
// repository and cites no section of a document (the section sign, U+00A7);
// a relative link of
// README.md or a page under docs/ leads to a file of the repository and, with
// a #fragment, to one of its headings.

// mdName is a name ending in .md: a base name ("NOTES.md") or a path
// ("docs/stack.md").
var mdName = regexp.MustCompile(`[A-Za-z0-9_.\-/]*[A-Za-z0-9_\-]\.md\b`)

// sectionSign marks a citation of a document's section.
const sectionSign = "\u00a7"

// danglingCitations returns what text cites that the repository does not
// have: each .md name that resolves to no file (a path must be a file of the
// repository, or end one after a "/"; a base name must be some file's base
// name), and each section sign.
func danglingCitations(text string, files *repoFiles) []string {
	var bad []string
	for _, m := range mdName.FindAllString(text, -1) {
		if !files.has(strings.TrimPrefix(m, "./")) {
			bad = append(bad, fmt.Sprintf("%s: no such file in the repository", m))
		}
	}
	if strings.Contains(text, sectionSign) {
		bad = append(bad, sectionSign+": a section of a document the repository does not have")
	}
	return bad
}

// repoFiles is every file of the repository, by path and by base name.
type repoFiles struct {
	paths []string // slash-separated, relative to the root
	bases map[string]bool
}

func newRepoFiles(paths []string) *repoFiles {
	r := &repoFiles{paths: paths, bases: map[string]bool{}}
	for _, p := range paths {
		r.bases[path.Base(p)] = true
	}
	return r
}

func (r *repoFiles) has(name string) bool {
	if !strings.Contains(name, "/") {
		return r.bases[name]
	}
	name = strings.TrimPrefix(name, "/")
	for _, p := range r.paths {
		if p == name || strings.HasSuffix(p, "/"+name) {
			return true
		}
	}
	return false
}

func TestDanglingCitations(t *testing.T) {
	files := newRepoFiles([]string{"README.md", "docs/stack.md", "testdata/replay/oracle/a/NOTES.md", "harness/layout_test.go"})
	tests := []struct {
		text string
		want int
	}{
		{"the stack (docs/stack.md, Departures)", 0},
		{"each recording's NOTES.md", 0},
		{"see README.md and ./docs/stack.md", 0},
		{"oracle/a/NOTES.md", 0},
		{"Tools modes (code-mode.md " + sectionSign + "1.1).", 2},
		{"The import rules (plan/LAYOUT.md)", 1},
		{"a runner failure wins over a denial (spec " + sectionSign + "5)", 1},
		{"docs/stacks.md", 1},
		{"stack.md, a page's base name", 0},
		{"ocs/stack.md", 1}, // a path ends a file's path only after a "/"
		{"a notes.md of the workspace", 1},
		{"markdown without the name: .md alone", 0},
	}
	for _, tc := range tests {
		if got := danglingCitations(tc.text, files); len(got) != tc.want {
			t.Errorf("danglingCitations(%q) = %q, want %d", tc.text, got, tc.want)
		}
	}
}

// walkRepo returns every file under root (slash-separated, relative), with
// .git, bin and build skipped.
func walkRepo(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == ".git" || p == filepath.Join(root, "bin") || p == filepath.Join(root, "build")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// scriptCommentPrefixes are the comment starts of the scripts: a line whose
// first non-blank text is one of them is a comment line.
var scriptCommentPrefixes = map[string][]string{
	".sh": {"#"}, ".py": {"#"}, ".yml": {"#"}, "Makefile": {"#"}, ".ci/run": {"#"},
	".js": {"//", "/*", "*"}, ".mjs": {"//", "/*", "*"}, ".ts": {"//", "/*", "*"},
}

// comments returns the comments of one file of the repository, one entry
// per comment group (Go) or comment line (scripts), each with the line it
// starts on; nil for a file that is neither Go nor a script.
func comments(fset *token.FileSet, root, rel string) ([]string, []int, error) {
	if strings.HasSuffix(rel, ".go") {
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		var texts []string
		var lines []int
		for _, g := range f.Comments {
			for _, c := range g.List {
				texts = append(texts, c.Text)
				lines = append(lines, fset.Position(c.Slash).Line)
			}
		}
		return texts, lines, nil
	}
	prefixes, ok := scriptCommentPrefixes[path.Ext(rel)]
	if !ok {
		prefixes, ok = scriptCommentPrefixes[rel]
	}
	if !ok || strings.HasPrefix(rel, "transcripts/") {
		return nil, nil, nil
	}
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, nil, err
	}
	var texts []string
	var lines []int
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		for _, p := range prefixes {
			if strings.HasPrefix(trimmed, p) {
				texts = append(texts, trimmed)
				lines = append(lines, i+1)
				break
			}
		}
	}
	return texts, lines, nil
}

// TestCommentsCiteOnlyRepoFiles: no comment of a .go file or a script
// names a .md file the repository does not have or a section of a document.
func TestCommentsCiteOnlyRepoFiles(t *testing.T) {
	root := Root(t)
	paths := walkRepo(t, root)
	files := newRepoFiles(paths)
	fset := token.NewFileSet()
	goFiles := 0
	for _, rel := range paths {
		texts, lines, err := comments(fset, root, rel)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(rel, ".go") {
			goFiles++
		}
		for i, text := range texts {
			for _, bad := range danglingCitations(text, files) {
				t.Errorf("%s:%d: %s (say in a line what upstream does, or point into docs/)", rel, lines[i], bad)
			}
		}
	}
	if goFiles < 100 {
		t.Errorf("scanned only %d .go files; the walk is broken", goFiles)
	}
}

// mdLink is an inline Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlugs returns the anchors of a Markdown file's headings, as GitHub
// makes them: lower case, punctuation dropped, spaces as "-", a repeated
// heading suffixed "-1", "-2", ...; headings inside code fences do not count.
func headingSlugs(md string) map[string]bool {
	slugs := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			slugs[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			slugs[slug] = true
		}
		seen[slug]++
	}
	return slugs
}

func TestHeadingSlugs(t *testing.T) {
	md := "# Benchmarks\n## Spawning `/bin/true`\n## The runner's 1.15x target\n### Code mode, `run_code`\n```sh\n# not a heading\n```\n## Departures from upstream\n## Departures from upstream\n"
	got := headingSlugs(md)
	for _, want := range []string{"benchmarks", "spawning-bintrue", "the-runners-115x-target", "code-mode-run_code", "departures-from-upstream", "departures-from-upstream-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] || len(got) != 6 {
		t.Errorf("anchors %v, want exactly six", got)
	}
}

// TestDocLinksResolve: every relative link of README.md and of the pages
// under docs/ leads to a file of the repository and, with a fragment, to a
// heading of it; the pages cite no section of a document (no section sign).
func TestDocLinksResolve(t *testing.T) {
	root := Root(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "harness", "oracle", "README.md"))
	links := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		rel = filepath.ToSlash(rel)
		if strings.Contains(string(data), sectionSign) {
			t.Errorf("%s cites a section (%s) of a document the repository does not have", rel, sectionSign)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			if r, err := filepath.Rel(root, dest); err != nil || strings.HasPrefix(r, "..") {
				t.Errorf("%s: link %s leaves the repository", rel, target)
				continue
			}
			b, err := os.ReadFile(dest)
			if err != nil {
				if fi, serr := os.Stat(dest); serr == nil && fi.IsDir() && frag == "" {
					continue
				}
				t.Errorf("%s: link %s: %v", rel, target, err)
				continue
			}
			if frag != "" && !headingSlugs(string(b))[frag] {
				t.Errorf("%s: link %s: no heading with the anchor #%s", rel, target, frag)
			}
		}
	}
	if links < 20 {
		t.Errorf("found only %d relative links in README.md and docs/; the scan is broken", links)
	}
}
