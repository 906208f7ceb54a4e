package harness

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/internal/waittest"
)

func TestNormalizer(t *testing.T) {
	tests := []struct {
		name string
		n    func() *Normalizer
		in   string
		want string
	}{
		{"workspace becomes <ws>", func() *Normalizer { return NewNormalizer().Workspace("/tmp/run1/ws") },
			"wrote /tmp/run1/ws/a.txt", "wrote <ws>/a.txt"},
		{"nested paths normalise before their parents", func() *Normalizer {
			return NewNormalizer().Temp("/tmp/run1").Workspace("/tmp/run1/ws")
		}, "/tmp/run1/ws/a and /tmp/run1/b", "<ws>/a and <tmp>/b"},
		{"trailing slash is cleaned", func() *Normalizer { return NewNormalizer().Workspace("/w/x/") },
			"cd /w/x", "cd <ws>"},
		{"rfc3339 times", func() *Normalizer { return NewNormalizer() },
			"at 2026-12-02T12:29:52.123456Z and 2026-12-02T12:29:52+01:00", "at <time> and <time>"},
		{"json epoch millis on named keys only", func() *Normalizer { return NewNormalizer().JSONTimes("time", "createdAt") },
			`{"seq":0,"time":1785498828287,"createdAt": 1783860675270,"size":1785498828287}`,
			`{"seq":0,"time":"<time>","createdAt": "<time>","size":1785498828287}`},
		{"uuids numbered by first appearance", func() *Normalizer { return NewNormalizer() },
			"f3cbd087-fb45-4b32-b0f2-3082d65bfcb4 a1cbd087-fb45-4b32-b0f2-3082d65bfcb4 f3cbd087-fb45-4b32-b0f2-3082d65bfcb4",
			"<uuid-1> <uuid-2> <uuid-1>"},
		{"custom ids", func() *Normalizer { return NewNormalizer().IDs("call", regexp.MustCompile(`call_[0-9a-z]+`)) },
			"call_9x call_7y call_9x", "<call-1> <call-2> <call-1>"},
		{"empty path ignored", func() *Normalizer { return NewNormalizer().Workspace("") }, "a b", "a b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.n().String(tc.in); got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNormalizerSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	n := NewNormalizer().Workspace(link)
	if got := n.String(real + "/f " + link + "/g"); got != "<ws>/f <ws>/g" {
		t.Errorf("got %q, want both forms normalised", got)
	}
}

func TestCompareLines(t *testing.T) {
	tests := []struct {
		name      string
		want, got string
		max       int
		out       string
		total     int
	}{
		{"equal", "a\nb\n", "a\nb\n", 0, "", 0},
		{"both empty", "", "", 0, "", 0},
		{"one line differs", "a\nb\nc\n", "a\nB\nc\n", 0, "f:2:\n\twant: b\n\tgot:  B\n", 1},
		{"fresh run longer", "a\n", "a\nb\n", 0, "f:2:\n\twant: (end of file)\n\tgot:  b\n", 1},
		{"committed longer", "a\nb\n", "a\n", 0, "f:2:\n\twant: b\n\tgot:  (end of file)\n", 1},
		{"trailing blank quoted", "a\n", "a \n", 0, "f:1:\n\twant: a\n\tgot:  \"a \"\n", 1},
		{"final newline only", "a\nb\n", "a\nb", 0, "f:2: final newline: committed has one, fresh run has none\n\twant: b\n\tgot:  b\n", 1},
		{"max limits the report, total counts all", "1\n2\n3\n", "x\ny\nz\n", 1,
			"f:1:\n\twant: 1\n\tgot:  x\n\t... and 2 more differing line(s) in f\n", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, total := CompareLines("f", []byte(tc.want), []byte(tc.got), tc.max)
			if total != tc.total {
				t.Errorf("total = %d, want %d", total, tc.total)
			}
			if got := FormatDrifts(d, total); got != tc.out {
				t.Errorf("report:\n%s\nwant:\n%s", got, tc.out)
			}
		})
	}
}

func TestFindRoot(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "harness", "sim.go")); err != nil {
		t.Errorf("FindRoot(.) = %s, not the repository root: %v", root, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindRoot(dir); err == nil || !strings.Contains(err.Error(), "no go.mod declaring module "+ModulePath) {
		t.Errorf("FindRoot in a foreign module: err = %v", err)
	}
}

// TestMustWrite: the parents are made and the content written; a parent
// that is a file fails the test.
func TestMustWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "c.txt")
	MustWrite(t, p, "x\n")
	if got, err := os.ReadFile(p); err != nil || string(got) != "x\n" {
		t.Errorf("read back %q, %v", got, err)
	}
	r := runRecorded(t, func(tb testing.TB) { MustWrite(tb, filepath.Join(p, "d.txt"), "y") })
	if !r.failed || !strings.Contains(strings.Join(r.msgs, "\n"), "not a directory") {
		t.Errorf("a file as parent: failed=%v msgs=%q, want the mkdir error", r.failed, r.msgs)
	}
}

func TestIsRoot(t *testing.T) {
	root := Root(t)
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	modDir := t.TempDir() // its go.mod is a directory: read fails, as for a root it may not read
	if err := os.Mkdir(filepath.Join(modDir, "go.mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, dir, want string }{
		{"the repository root", root, ""},
		{"a go.mod that cannot be read", modDir, "unreadable (go.mod: is a directory)"},
		{"a path that does not exist", filepath.Join(root, "nonexistent"), "no such directory"},
		{"a file", filepath.Join(root, "go.mod"), "not a directory"},
		{"an empty directory", t.TempDir(), "not the repository root (no go.mod declaring module " + ModulePath + ")"},
		{"another module", foreign, "not the repository root"},
		{"a subdirectory of the root", filepath.Join(root, "harness"), "not the repository root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := IsRoot(tc.dir)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("IsRoot(%s) = %v, want %q", tc.dir, err, tc.want)
			}
		})
	}
}

// TestIsRootUnreadable: a directory the user may not search is unreadable,
// with the reason, not "not the repository root".
func TestIsRootUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode-000 directory (CAP_DAC_OVERRIDE); the unprivileged pass runs this")
	}
	dir := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(dir, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if err := IsRoot(dir); err == nil || err.Error() != "unreadable (go.mod: permission denied)" {
		t.Fatalf("IsRoot(mode 000) = %v, want unreadable (go.mod: permission denied)", err)
	}
}

func TestRunSim(t *testing.T) {
	root := t.TempDir()
	var tempSeen string
	tests := []struct {
		name string
		sim  Sim
		want string // error substring; "" = success
	}{
		{"declared files", Sim{Name: "ok", Files: []string{"txt/a.txt"}, Run: func(*Env) (map[string][]byte, error) {
			return map[string][]byte{"txt/a.txt": []byte("a\n")}, nil
		}}, ""},
		{"undeclared file", Sim{Name: "extra", Files: []string{"a"}, Run: func(*Env) (map[string][]byte, error) {
			return map[string][]byte{"a": nil, "b": nil}, nil
		}}, `sim extra: produced "b", which is not in its Files list`},
		{"declared file missing", Sim{Name: "short", Files: []string{"a", "b"}, Run: func(*Env) (map[string][]byte, error) {
			return map[string][]byte{"a": nil}, nil
		}}, `sim short: did not produce "b" (listed in its Files)`},
		{"unclean name", Sim{Name: "dots", Files: []string{"../a"}, Run: func(*Env) (map[string][]byte, error) {
			return map[string][]byte{"../a": nil}, nil
		}}, `sim dots: Files: file name "../a": must be a clean relative path under snapshots/`},
		{"error names the sim", Sim{Name: "broken", Run: func(*Env) (map[string][]byte, error) {
			return nil, errors.New("bwrap missing")
		}}, "sim broken: bwrap missing"},
		{"panic is an error", Sim{Name: "panics", Run: func(*Env) (map[string][]byte, error) {
			var m map[string]int
			//lint:ignore SA5000 the sim panics on purpose: RunSim must turn the panic into an error
			m["x"]++
			return nil, nil
		}}, "sim panics: panic: assignment to entry in nil map"},
		{"no Run", Sim{Name: "empty"}, "sim empty: no Run function"},
		{"leaked temp dir", Sim{Name: "leaky", Files: []string{"a"}, Run: func(env *Env) (map[string][]byte, error) {
			d, err := env.TempDir()
			tempSeen = d
			return map[string][]byte{"a": []byte("ok\nwrote " + d + "/x\n")}, err
		}}, "sim leaky: snapshots/a:2: contains the run's temporary directory"},
		{"leaked root", Sim{Name: "rooty", Files: []string{"a"}, Run: func(env *Env) (map[string][]byte, error) {
			return map[string][]byte{"a": []byte(env.Root + "/transcripts\n")}, nil
		}}, "sim rooty: snapshots/a:1: contains the repository root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RunSim(tc.sim, root, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if tempSeen == "" {
		t.Fatal("leaky sim did not run")
	}
	if _, err := os.Stat(tempSeen); !os.IsNotExist(err) {
		t.Errorf("temp dir %s not removed after the run (stat err %v)", tempSeen, err)
	}
}

func TestWriteFileAndCompareFile(t *testing.T) {
	dir := t.TempDir()
	changed, err := WriteFile(dir, "txt/a.txt", []byte("1\n2\n"))
	if err != nil || !changed {
		t.Fatalf("first write: changed=%v err=%v", changed, err)
	}
	if changed, err = WriteFile(dir, "txt/a.txt", []byte("1\n2\n")); err != nil || changed {
		t.Fatalf("identical write: changed=%v err=%v, want unchanged", changed, err)
	}
	if _, err := WriteFile(dir, "/abs", nil); err == nil {
		t.Error("absolute name accepted")
	}
	d, n, err := CompareFile(dir, "txt/a.txt", "snapshots/txt/a.txt", []byte("1\nX\n"), 3)
	if err != nil || n != 1 || d[0].String() != "snapshots/txt/a.txt:2:\n\twant: 2\n\tgot:  X" {
		t.Errorf("CompareFile drift = %v (n=%d, err=%v)", d, n, err)
	}
	d, n, err = CompareFile(dir, "txt/none.txt", "snapshots/txt/none.txt", []byte("1\n"), 3)
	if err != nil || n != 1 || d[0].Line != 0 || !strings.Contains(d[0].String(), "snapshots/txt/none.txt: missing") {
		t.Errorf("missing file: %v (n=%d, err=%v)", d, n, err)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	msgs   []string
	failed bool
}

func (r *recorder) Helper() {}
func (r *recorder) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	for _, a := range args {
		r.msgs = append(r.msgs, strings.TrimSpace(strings.ReplaceAll(fmt.Sprint(a), "\r", "")))
	}
}
func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) FailNow()                          { r.failed = true; runtime.Goexit() }

func runRecorded(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	waittest.Closed(t, done, "the recorded test body to end")
	return r
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(UpdateEnv, "")
	r := runRecorded(t, func(tb testing.TB) { Golden(tb, dir, "sub/x.golden", []byte("a\nb\n")) })
	if !r.failed || !strings.Contains(strings.Join(r.msgs, "\n"), "DSHSIM_UPDATE=1") {
		t.Errorf("missing golden: failed=%v msgs=%q, want a hint naming DSHSIM_UPDATE=1", r.failed, r.msgs)
	}

	t.Setenv(UpdateEnv, "1")
	if r := runRecorded(t, func(tb testing.TB) { Golden(tb, dir, "sub/x.golden", []byte("a\nb\n")) }); r.failed {
		t.Fatalf("update failed: %q", r.msgs)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "sub", "x.golden")); err != nil || string(data) != "a\nb\n" {
		t.Fatalf("golden after update = %q, %v", data, err)
	}

	t.Setenv(UpdateEnv, "")
	if r := runRecorded(t, func(tb testing.TB) { Golden(tb, dir, "sub/x.golden", []byte("a\nb\n")) }); r.failed {
		t.Errorf("equal data failed: %q", r.msgs)
	}
	r = runRecorded(t, func(tb testing.TB) { Golden(tb, dir, "sub/x.golden", []byte("a\nB\n")) })
	want := filepath.Join(dir, "sub", "x.golden") + ":2:\n\twant: b\n\tgot:  B"
	if !r.failed || !strings.Contains(strings.Join(r.msgs, "\n"), want) {
		t.Errorf("drift: failed=%v msgs=%q, want a report containing %q", r.failed, r.msgs, want)
	}

	// goldie's own -update flag is not a second switch.
	if f := flag.Lookup("update"); f != nil {
		if err := f.Value.Set("true"); err != nil {
			t.Fatal(err)
		}
		defer f.Value.Set("false")
		r = runRecorded(t, func(tb testing.TB) { Golden(tb, dir, "sub/x.golden", []byte("a\nC\n")) })
		if !r.failed {
			t.Error("goldie's -update flag made Golden pass on drift")
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "sub", "x.golden")); string(data) != "a\nb\n" {
			t.Errorf("goldie's -update flag rewrote the golden: %q", data)
		}
	} else {
		t.Error("goldie's update flag not registered; this check has nothing to check")
	}
}

// TestGoldenPart: a run that produces part of a golden compares with that
// part of the committed file, and never writes it, DSHSIM_UPDATE=1 or not.
func TestGoldenPart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "g.txt"), []byte("a\nroot only\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	part := func(committed []byte) []byte { return []byte(strings.ReplaceAll(string(committed), "root only\n", "")) }
	for _, update := range []string{"", "1"} {
		t.Setenv(UpdateEnv, update)
		if r := runRecorded(t, func(tb testing.TB) { GoldenPart(tb, dir, "g.txt", []byte("a\nb\n"), part) }); r.failed {
			t.Errorf("update=%q: the part failed: %q", update, r.msgs)
		}
		r := runRecorded(t, func(tb testing.TB) { GoldenPart(tb, dir, "g.txt", []byte("a\nB\n"), part) })
		if !r.failed || !strings.Contains(strings.Join(r.msgs, "\n"), "want: b") {
			t.Errorf("update=%q: drift of the part: failed=%v msgs=%q", update, r.failed, r.msgs)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "g.txt")); string(data) != "a\nroot only\nb\n" {
			t.Fatalf("update=%q: a partial run rewrote the golden: %q", update, data)
		}
	}
}

func TestUnclaimedFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"txt/a.txt", "txt/old.txt", "txt/.keep", "out/deep/b.txt", "escape.txt", "other/x.txt"} {
		if _, err := WriteFile(dir, f, []byte("x\n")); err != nil {
			t.Fatal(err)
		}
	}
	sims := []Sim{{Name: "s", Files: []string{"txt/a.txt", "out/b.txt"}}}
	got, err := UnclaimedFiles(dir, sims)
	if err != nil {
		t.Fatal(err)
	}
	// escape.txt and other/ are outside the sims' directories: a package's own goldens.
	if want := []string{"out/deep/b.txt", "txt/old.txt"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("UnclaimedFiles = %q, want %q", got, want)
	}
	if got, err := UnclaimedFiles(filepath.Join(dir, "none"), sims); err != nil || len(got) != 0 {
		t.Errorf("missing dir: %q, %v", got, err)
	}
}
