package harness

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerbatimIsDefinedOnce: VERBATIM, the word the code and pages use for
// upstream's text byte for byte, is defined in one place, docs/README.md's
// Words, and the entry points a reader starts from point at it: the README,
// the stack page and the manuals of the packages that use it most.
func TestVerbatimIsDefinedOnce(t *testing.T) {
	root := Root(t)
	def := strings.Repeat("*", 2) + "VERBATIM" + strings.Repeat("*", 2) // not spelled here, which would be a second one
	var defs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".md" && ext != ".go" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for range strings.Count(string(data), def) {
			rel, _ := filepath.Rel(root, p)
			defs = append(defs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || defs[0] != "docs/README.md" {
		t.Errorf("%s is defined in %v; want once, in docs/README.md", def, defs)
	}
	index := read(t, root, "docs/README.md")
	if !strings.Contains(index, "\n## Words\n") || !strings.Contains(index, "- "+def+" ") {
		t.Errorf("docs/README.md has no Words section defining %s", def)
	}
	for file, pointer := range map[string]string{
		"README.md":       "(docs/README.md#words)",
		"docs/stack.md":   "(README.md#words)",
		"sandbox/doc.go":  "docs/README.md, Words",
		"pipeline/doc.go": "docs/README.md, Words",
	} {
		if !strings.Contains(read(t, root, file), pointer) {
			t.Errorf("%s does not point at the definition of VERBATIM (%s)", file, pointer)
		}
	}
}

func read(t *testing.T, root, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
