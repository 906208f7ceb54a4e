package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness"
)

// tree writes files (a value "->target" makes a symlink) under a fresh
// directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		target, link := strings.CutPrefix(body, "->")
		if !link {
			harness.MustWrite(t, p, body)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func loader(ws string, markers ...string) *Loader {
	return New(Config{Cwd: ws, DshHome: filepath.Join(ws, ".dsh"), MaxBytes: DefaultMaxBytes, ProjectRootMarkers: markers})
}

func compose(t *testing.T, l *Loader, c Composition) *Message {
	t.Helper()
	m, err := l.Compose(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const identity = `{"projectRoot":"","projectRootMarkers":[".git"],"maxBytes":65536,"maxSourceBytes":1048576,"instructionFileCandidates":["AGENTS.md","CLAUDE.md"],"localInstructionFileCandidates":["AGENTS.local.md","CLAUDE.local.md"]}`

// TestBaseline: user-global first, then the root's candidates in order; a
// symlinked AGENTS.md reads its target, a CLAUDE.md repeating it (trimmed)
// is dropped, a </system-reminder> in a body is escaped; the source names
// each file's change with its SHA-1.
func TestBaseline(t *testing.T) {
	ws := tree(t, map[string]string{
		".dsh/AGENTS.md": "Global.\n", "AGENTS.canonical.md": "Root.\n", "AGENTS.md": "->AGENTS.canonical.md",
		"CLAUDE.md": "  Root.\n\n", "AGENTS.local.md": "Local </system-reminder> note.\n",
	})
	m := compose(t, loader(ws), Composition{})
	want := "<system-reminder>\n" + Intro + "\n\nInstructions from: $DSH_HOME/AGENTS.md\n\nGlobal.\n\n\nInstructions from: AGENTS.md\n\nRoot.\n\n\n" +
		"Instructions from: AGENTS.local.md\n\nLocal <\\/system-reminder> note.\n\n</system-reminder>"
	if diff := cmp.Diff([]string{want}, m.Texts); diff != "" {
		t.Errorf("baseline text (-want +got):\n%s", diff)
	}
	src := Source{Kind: "agent-instructions", Form: "instructions", Baseline: true, BaselineIdentity: identity, Changes: []Change{
		{"set", "user-global\x00AGENTS.md", "$DSH_HOME/AGENTS.md", digest("Global.\n")},
		{"set", ".\x00AGENTS.md", "AGENTS.md", digest("Root.\n")},
		{"set", ".\x00AGENTS.local.md", "AGENTS.local.md", digest("Local </system-reminder> note.\n")},
	}}
	if diff := cmp.Diff(src, m.Source); diff != "" {
		t.Errorf("baseline source (-want +got):\n%s", diff)
	}
	if digest("Root.\n") != "2079b806265d9ed7b3678b971ab0958375d855cc" {
		t.Errorf("digest is not SHA-1 hex: %s", digest("Root.\n"))
	}
}

// TestProjection: once the baseline is visible, a touched path projects
// the directories down to it (set); a changed file is replaced, a removed
// one removed; nothing new composes nothing; a pending message stands
// while nothing was touched.
func TestProjection(t *testing.T) {
	ws := tree(t, map[string]string{"AGENTS.md": "Root.\n", "a/AGENTS.md": "A.\n", "a/b/CLAUDE.md": "B.\n", "a/b/f.txt": "f\n"})
	l := loader(ws)
	base := compose(t, l, Composition{})
	visible := []Message{*base}
	m := compose(t, l, Composition{Visible: visible, Touched: []string{"a/b/f.txt"}})
	if m == nil || m.Source.Baseline || len(m.Source.Changes) != 2 || m.Source.Changes[0].Scope != "a\x00AGENTS.md" || m.Source.Changes[1].Path != "a/b/CLAUDE.md" {
		t.Fatalf("projection %+v", m)
	}
	if !strings.HasPrefix(m.Texts[0], "<system-reminder>\nAdditional instructions from: a/AGENTS.md\n\nThese instructions apply to work under `a`.") {
		t.Errorf("projection text %q", m.Texts[0])
	}
	visible = append(visible, *m)
	if again := compose(t, l, Composition{Visible: visible, Touched: []string{"a/b/f.txt"}}); again != nil {
		t.Errorf("nothing changed, composed %+v", again)
	}
	pending := Message{Texts: []string{"x"}, Source: Source{Kind: "agent-instructions"}}
	if p := compose(t, l, Composition{Visible: visible, Pending: []Message{pending}}); p == nil || p.Texts[0] != "x" {
		t.Errorf("a pending message without a touch: %+v", p)
	}
	if err := os.WriteFile(filepath.Join(ws, "a/AGENTS.md"), []byte("A2.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "a/b/CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	m = compose(t, l, Composition{Visible: visible})
	want := []Change{{"replace", "a\x00AGENTS.md", "a/AGENTS.md", digest("A2.\n")}, {"remove", "a/b\x00CLAUDE.md", "a/b/CLAUDE.md", ""}}
	if m == nil || !cmp.Equal(want, m.Source.Changes) {
		t.Fatalf("changes %+v, want %+v", m, want)
	}
	if !strings.Contains(m.Texts[0], "Updated instructions from: a/AGENTS.md\n\nThis file changed after it was loaded.") ||
		!strings.Contains(m.Texts[0], "Instructions removed: a/b/CLAUDE.md\n\nThe previously loaded instructions from this file no longer apply.") {
		t.Errorf("changes text %q", m.Texts[0])
	}
}

// TestBaselineComesBack: a baseline no longer visible (compacted) is
// entered again, with the projection's changes after it.
func TestBaselineComesBack(t *testing.T) {
	ws := tree(t, map[string]string{"AGENTS.md": "Root.\n", "n/AGENTS.md": "N.\n", "n/t": ""})
	l := loader(ws)
	compose(t, l, Composition{})
	m := compose(t, l, Composition{Touched: []string{"n/t"}})
	if m == nil || len(m.Texts) != 2 || !m.Source.Baseline || len(m.Source.Changes) != 2 {
		t.Fatalf("message %+v", m)
	}
}

// TestProjectRootMarker: the nearest ancestor holding a marker is the root:
// its files are the baseline's, paths are shown relative to it, and the
// identity names it relative to the cwd.
func TestProjectRootMarker(t *testing.T) {
	root := tree(t, map[string]string{".dsh-project": "", "AGENTS.md": "Top.\n", "w/AGENTS.md": "W.\n"})
	ws := filepath.Join(root, "w")
	m := compose(t, loader(ws, ".dsh-project"), Composition{})
	if m == nil || len(m.Source.Changes) != 2 || m.Source.Changes[1].Path != "w/AGENTS.md" || m.Source.Changes[1].Scope != "w\x00AGENTS.md" {
		t.Fatalf("message %+v", m)
	}
	if !strings.Contains(m.Source.BaselineIdentity, `"projectRoot":".."`) {
		t.Errorf("identity %s", m.Source.BaselineIdentity)
	}
	if m := compose(t, loader(ws), Composition{}); m == nil || len(m.Source.Changes) != 1 {
		t.Errorf("without the marker the cwd is the root: %+v", m)
	}
}

// TestBudget: over maxBytes the broadest files go first, then the most
// specific is cut; the budget line says what happened.
func TestBudget(t *testing.T) {
	files := []File{{"/r/AGENTS.md", "AGENTS.md", strings.Repeat("a", 300)}, {"/r/x/AGENTS.md", "x/AGENTS.md", strings.Repeat("b", 300)}}
	s := baselineStyle(files, false)
	full := render(files, 1<<20, s)
	if len(full.represented) != 2 {
		t.Fatalf("full render %+v", full)
	}
	drop := render(files, len(full.text)-10, s)
	if len(drop.represented) != 1 || drop.represented[0].DisplayPath != "x/AGENTS.md" || !strings.Contains(drop.text, "Workspace instruction budget") || !strings.Contains(drop.text, "omitted AGENTS.md") {
		t.Errorf("dropped render %q", drop.text)
	}
	cut := render(files, 450, s)
	if len(cut.text) > 450 || !strings.Contains(cut.text, "truncated x/AGENTS.md from 300 to ") {
		t.Errorf("cut render (%d bytes) %q", len(cut.text), cut.text)
	}
	if r := render(files, 0, s); r.text != "" {
		t.Errorf("maxBytes 0 renders %q", r.text)
	}
	if got := truncateUTF8("aé", 2); got != "a" {
		t.Errorf("a cut inside a character: %q", got)
	}
}

func TestOff(t *testing.T) {
	ws := tree(t, map[string]string{"AGENTS.md": "Root.\n"})
	if m, err := New(Config{Cwd: ws, DshHome: ws}).Compose(Composition{}); m != nil || err != nil {
		t.Errorf("maxBytes 0: %+v %v", m, err)
	}
}

// TestFileText: an instruction file is read as upstream's file service
// reads it: one leading byte-order mark dropped (a second one is text); a
// NUL byte among the first 8192 bytes (binary) or bytes that are not UTF-8
// skip the file.
func TestFileText(t *testing.T) {
	late := strings.Repeat("x", binarySample) + "\x00"
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"Plain.\n", "Plain.\n", true},
		{"\ufeffMarked.\n", "Marked.\n", true},
		{"\ufeff\ufeffTwice.\n", "\ufeffTwice.\n", true},
		{"\ufeff", "", true},
		{"mid\ufeffdle\n", "mid\ufeffdle\n", true},
		{"nul\x00byte\n", "", false},
		{strings.Repeat("x", binarySample-1) + "\x00", "", false},
		{late, late, true},
		{"bad \xff byte\n", "", false},
		{"cut \xe2\x82", "", false},
	} {
		got, ok := decodeText([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("decodeText(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	ws := tree(t, map[string]string{"AGENTS.md": "\ufeffRoot.\n", "CLAUDE.md": "bad \xff\n", ".dsh/AGENTS.md": "nul\x00\n"})
	m := compose(t, loader(ws), Composition{})
	want := "<system-reminder>\n" + Intro + "\n\nInstructions from: AGENTS.md\n\nRoot.\n\n</system-reminder>"
	if diff := cmp.Diff([]string{want}, m.Texts); diff != "" {
		t.Errorf("baseline text (-want +got):\n%s", diff)
	}
	if len(m.Source.Changes) != 1 || m.Source.Changes[0].Digest != digest("Root.\n") {
		t.Errorf("changes %+v, want AGENTS.md's only, digested without its mark", m.Source.Changes)
	}
}
