package fileset

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// read is every file of dir by name.
func read(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

func setUp(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var (
	oldSet = map[string]string{"a.jsonl": "old a\n", "b.jsonl": "old b\n", "c.json": "same\n"}
	newSet = map[string]string{"a.jsonl": "new a\n", "b.jsonl": "new b\n", "c.json": "same\n"}
	names  = []string{"a.jsonl", "b.jsonl", "c.json"}
)

func bytesOf(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

// TestReplace replaces the changed files, keeps the unchanged one and every
// file's mode, and leaves nothing of its own behind.
func TestReplace(t *testing.T) {
	dir := setUp(t, oldSet)
	changed, err := Replace(context.Background(), dir, names, bytesOf(newSet))
	if err != nil || !slices.Equal(changed, []string{"a.jsonl", "b.jsonl"}) {
		t.Fatalf("changed %v, %v", changed, err)
	}
	if got := read(t, dir); !maps.Equal(got, newSet) {
		t.Errorf("files %v, want %v", got, newSet)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a.jsonl")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the old file's 0640", fi.Mode().Perm())
	}
	if changed, err := Replace(context.Background(), dir, names, bytesOf(newSet)); err != nil || changed != nil {
		t.Errorf("second replace: %v, %v", changed, err)
	}
	if _, err := Replace(context.Background(), dir, []string{"x"}, nil); err == nil {
		t.Error("a name without content was accepted")
	}
	for _, bad := range []string{"../x", "sub/x", ".", "..", "", JournalFile, tempPrefix + "a"} {
		if _, err := Replace(context.Background(), dir, []string{bad}, map[string][]byte{bad: nil}); err == nil {
			t.Errorf("name %q was accepted", bad)
		}
	}
}

// TestReplaceCancelled: a context cancelled before the decision writes
// nothing, and says why.
func TestReplaceCancelled(t *testing.T) {
	dir := setUp(t, oldSet)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("SIGINT"))
	changed, err := Replace(ctx, dir, names, bytesOf(newSet))
	if err == nil || !strings.Contains(err.Error(), "SIGINT") || changed != nil {
		t.Fatalf("cancelled: %v, %v", changed, err)
	}
	if got := read(t, dir); !maps.Equal(got, oldSet) {
		t.Errorf("files %v, want the old set", got)
	}
}

// TestInterruptedCommitIsCompleted stops a replacement at each point after
// its decision (k of the renames done): a reader refuses the directory, and
// Recover (or the next Replace) makes the new set whole. Stopped before the
// decision, the temporaries are removed and the old set stays.
func TestInterruptedCommitIsCompleted(t *testing.T) {
	for k := 0; k <= 2; k++ {
		dir := setUp(t, oldSet)
		var entries []entry
		for _, n := range []string{"a.jsonl", "b.jsonl"} {
			temp, err := writeTemp(dir, n, []byte(newSet[n]))
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, entry{Name: n, Temp: temp})
		}
		if err := writeJournal(dir, entries); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries[:k] {
			if err := os.Rename(filepath.Join(dir, e.Temp), filepath.Join(dir, e.Name)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Shared(dir); err == nil || !strings.Contains(err.Error(), JournalFile) {
			t.Errorf("%d renamed: a reader took the half-replaced set (%v)", k, err)
		}
		did, err := Recover(dir)
		if err != nil || !strings.Contains(did, "completed an interrupted replacement of a.jsonl, b.jsonl") {
			t.Errorf("%d renamed: recover %q, %v", k, did, err)
		}
		if got := read(t, dir); !maps.Equal(got, newSet) {
			t.Errorf("%d renamed: files %v, want the new set", k, got)
		}
		if release, err := Shared(dir); err != nil {
			t.Errorf("after recovery: %v", err)
		} else {
			release()
		}
	}
	dir := setUp(t, oldSet)
	if _, err := writeTemp(dir, "a.jsonl", []byte("new a\n")); err != nil {
		t.Fatal(err)
	}
	if did, err := Recover(dir); err != nil || !strings.Contains(did, "removed 1 temporary file") {
		t.Errorf("undecided: %q, %v", did, err)
	}
	if got := read(t, dir); !maps.Equal(got, oldSet) {
		t.Errorf("undecided: files %v, want the old set", got)
	}
}

// TestHostileJournal: a journal naming anything but a temporary of this
// package's and a plain file name of the directory is refused, and nothing
// is renamed.
func TestHostileJournal(t *testing.T) {
	for _, journal := range []string{
		`[{"name":"../escape","temp":".dshsim-new.../escape.1"}]`,
		`[{"name":"a.jsonl","temp":"b.jsonl"}]`,
		`[{"name":"a.jsonl","temp":".dshsim-new.b.jsonl.1"}]`,
		`[{"name":".dshsim-journal","temp":".dshsim-new..dshsim-journal.1"}]`,
		`{"name":"a.jsonl"}`,
		`null`,
	} {
		dir := setUp(t, oldSet)
		if err := os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("old b\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, JournalFile), []byte(journal), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Recover(dir); err == nil || !strings.Contains(err.Error(), "nothing replaced") {
			t.Errorf("journal %s: %v", journal, err)
		}
		got := read(t, dir)
		delete(got, JournalFile)
		if !maps.Equal(got, oldSet) {
			t.Errorf("journal %s: files %v", journal, got)
		}
	}
}

// TestPlaceDir places a complete directory, refuses an existing target,
// and leaves the temporary directory when the context was cancelled.
func TestPlaceDir(t *testing.T) {
	parent := t.TempDir()
	tmp := filepath.Join(parent, ".out.partial")
	if err := os.MkdirAll(filepath.Join(tmp, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "workspace", "f"), []byte("x"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(parent, "out")
	if err := PlaceDir(ctx, tmp, out); err == nil {
		t.Fatal("a cancelled placement placed")
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("out exists after a cancelled placement")
	}
	if err := PlaceDir(context.Background(), tmp, out); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(out, "workspace", "f")); err != nil || string(data) != "x" {
		t.Errorf("placed %q, %v", data, err)
	}
	os.Mkdir(tmp, 0o755)
	if err := PlaceDir(context.Background(), tmp, out); err == nil {
		t.Error("placed over an existing directory")
	}
}
