package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
)

// UpdateEnv is the one environment variable that updates every golden:
// DSHSIM_UPDATE=1 go test ./... rewrites package goldens ([Golden]), the
// effect files under snapshots/ (harness/sims tests) and testscript scripts
// (scenarios). Any other value (or unset) compares.
const UpdateEnv = "DSHSIM_UPDATE"

// Updating reports whether goldens are being updated (DSHSIM_UPDATE=1).
func Updating() bool { return os.Getenv(UpdateEnv) == "1" }

// SnapshotsDir is the golden directory for effect files, relative to the
// repository root.
const SnapshotsDir = "snapshots"

// ModulePath is the module whose root [FindRoot] looks for.
const ModulePath = "github.com/dshsim/dshsim"

// FindRoot walks up from dir to the repository root: the first directory
// holding a go.mod that declares [ModulePath].
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("harness: find repository root: %w", err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && declaresModule(data, ModulePath) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("harness: no go.mod declaring module %s in %s or any parent", ModulePath, abs)
		}
	}
}

// Root is the repository root of the test's working directory ([FindRoot]
// of "."); the test fails where there is none.
func Root(t testing.TB) string {
	t.Helper()
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// MustWrite writes content to path (mode 0644), making its parent
// directories (0755) first; the test fails on an error.
func MustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// IsRoot says why dir is not the repository root (nil when it is): it must be
// a directory holding a go.mod that declares [ModulePath]. A go.mod that
// cannot be read (a directory it may not search, a go.mod it may not read)
// is "unreadable" with the reason, not a claim that dir is no root.
func IsRoot(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("no such directory")
		}
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory")
	}
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("unreadable (go.mod: %v)", err)
	}
	if err != nil || !declaresModule(data, ModulePath) {
		return fmt.Errorf("not the repository root (no go.mod declaring module %s)", ModulePath)
	}
	return nil
}

func declaresModule(gomod []byte, module string) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == module {
			return true
		}
	}
	return false
}

// CheckFileName reports whether name is a clean, relative, slash-separated
// path inside snapshots/ (no "..", no leading "/", no empty parts).
func CheckFileName(name string) error {
	switch {
	case name == "":
		return errors.New("empty file name")
	case strings.Contains(name, `\`):
		return fmt.Errorf("file name %q: use forward slashes", name)
	case path.IsAbs(name) || !fs.ValidPath(name) || path.Clean(name) != name:
		return fmt.Errorf("file name %q: must be a clean relative path under %s/", name, SnapshotsDir)
	}
	return nil
}

// RunSim runs one sim with a fresh [Env] rooted at root and checks its
// output: every file in s.Files is produced, nothing else is, names are clean,
// and no file contains the repository root or a temporary directory of the
// run (that text varies between machines; normalise it with [Normalizer]).
// A panic in s.Run becomes an error naming the sim. Temporary directories
// are run directories ([MkdirRun]), removed before RunSim returns; a run
// killed before that leaves them to the next dsh-sim run ([RemoveDeadRuns]).
// logf may be nil.
func RunSim(s Sim, root string, logf func(format string, args ...any)) (files map[string][]byte, err error) {
	if s.Run == nil {
		return nil, fmt.Errorf("sim %s: no Run function", s.Name)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	var temps []string
	var releases []func()
	defer func() {
		for _, release := range releases {
			release()
		}
	}()
	env := &Env{
		Root: root,
		TempDir: func() (string, error) {
			d, release, err := MkdirRun(os.TempDir(), safeName(s.Name))
			if err == nil {
				temps, releases = append(temps, d), append(releases, release)
			}
			return d, err
		},
		Logf: logf,
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("sim %s: panic: %v", s.Name, p)
			}
		}()
		files, err = s.Run(env)
	}()
	if err != nil {
		if !strings.HasPrefix(err.Error(), "sim "+s.Name+":") {
			err = fmt.Errorf("sim %s: %w", s.Name, err)
		}
		return nil, err
	}
	declared := map[string]bool{}
	for _, f := range s.Files {
		if err := CheckFileName(f); err != nil {
			return nil, fmt.Errorf("sim %s: Files: %v", s.Name, err)
		}
		declared[f] = true
	}
	var problems []string
	for _, name := range sortedKeys(files) {
		if !declared[name] {
			problems = append(problems, fmt.Sprintf("produced %q, which is not in its Files list", name))
			continue
		}
		if where := leak(files[name], root, temps); where != "" {
			problems = append(problems, fmt.Sprintf("%s/%s:%s", SnapshotsDir, name, where))
		}
	}
	for _, f := range s.Files {
		if _, ok := files[f]; !ok {
			problems = append(problems, fmt.Sprintf("did not produce %q (listed in its Files)", f))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("sim %s: %s", s.Name, strings.Join(problems, "; "))
	}
	return files, nil
}

// leak returns "line: contains <what>" for the first line of data that holds
// the repository root or one of the temp dirs; "" if none.
func leak(data []byte, root string, temps []string) string {
	needles := map[string]string{}
	if len(root) > 1 {
		needles[root] = "the repository root " + root
	}
	for _, t := range temps {
		needles[t] = "the run's temporary directory " + t
		if real, err := filepath.EvalSymlinks(t); err == nil {
			needles[real] = "the run's temporary directory " + real
		}
	}
	if len(needles) == 0 {
		return ""
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		for _, n := range sortedKeys(needles) {
			if bytes.Contains(line, []byte(n)) {
				return fmt.Sprintf("%d: contains %s (normalise it, e.g. to %s)", i+1, needles[n], WorkspacePlaceholder)
			}
		}
	}
	return ""
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WriteFile writes data to dir/name (slash-separated name), creating parent
// directories. It leaves an identical file untouched and reports whether it
// changed anything.
func WriteFile(dir, name string, data []byte) (changed bool, err error) {
	if err := CheckFileName(name); err != nil {
		return false, err
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+filepath.Base(p)+"-")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	return true, os.Rename(tmp.Name(), p)
}

// CompareFile compares fresh data with the committed file dir/name. shown is
// the path used in the drifts (e.g. "snapshots/txt/x.txt"). A missing file is
// one Drift with Line 0; a read error is returned as an error.
func CompareFile(dir, name, shown string, fresh []byte, max int) (drifts []Drift, total int, err error) {
	committed, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return []Drift{{File: shown, Note: "missing (the fresh run produces it; write it with make sim)"}}, 1, nil
	}
	if err != nil {
		return nil, 0, err
	}
	d, n := CompareLines(shown, committed, fresh, max)
	return d, n, nil
}

// Golden compares got with the golden file dir/name (name may contain
// slashes), reporting drifts line by line with file:line, want and got. With
// DSHSIM_UPDATE=1 it writes the file instead. It uses goldie v2 for naming and
// writing the file, but never goldie's Assert: goldie's own -update flag and
// GOLDIE_UPDATE have no effect, DSHSIM_UPDATE is the one switch.
//
//	func TestProfiles(t *testing.T) {
//		harness.Golden(t, "testdata", "profiles.golden", render(profiles()))
//	}
func Golden(t testing.TB, dir, name string, got []byte) {
	t.Helper()
	GoldenPart(t, dir, name, got, nil)
}

// GoldenPart is [Golden] for a run that can produce only part of the golden
// file (the escape corpus's root sections need root): part, when not nil,
// maps the committed file to the part this run produces, and got is
// compared with that. Such a run never writes the file, DSHSIM_UPDATE=1 or
// not (it would drop what it cannot produce): it compares, and logs why.
func GoldenPart(t testing.TB, dir, name string, got []byte, part func(committed []byte) []byte) {
	t.Helper()
	g := goldie.New(t, goldie.WithFixtureDir(dir), goldie.WithNameSuffix(""))
	file := g.GoldenFileName(t, filepath.FromSlash(name))
	switch {
	case Updating() && part == nil:
		if err := g.Update(t, filepath.FromSlash(name), got); err != nil {
			t.Fatalf("update golden %s: %v", file, err)
		}
		return
	case Updating():
		t.Logf("%s=1: this run produces only part of %s; comparing instead of writing", UpdateEnv, file)
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("golden %s: %v (create it with %s=1 go test)", file, err, UpdateEnv)
	}
	if part != nil {
		want = part(want)
	}
	if d := LineDiff(file, want, got); d != "" {
		t.Errorf("result differs from golden %s (update on purpose with %s=1 go test):\n%s", file, UpdateEnv, d)
	}
}

// UnclaimedFiles lists the files (slash-separated, sorted) in the sims'
// directories under snapshotDir that no sim in sims lists in its Files:
// leftovers of a renamed or removed sim. The sims' directories are the first
// path elements of their files ("txt", "out"); files elsewhere in snapshots/
// (such as a package's own golden at the top level) belong to that package's
// tests and are not looked at. Dot files and dot directories are ignored; a
// missing directory is empty.
func UnclaimedFiles(snapDir string, sims []Sim) ([]string, error) {
	claimed := map[string]bool{}
	dirs := map[string]bool{}
	for _, s := range sims {
		for _, f := range s.Files {
			claimed[f] = true
			if top, _, ok := strings.Cut(f, "/"); ok {
				dirs[top] = true
			}
		}
	}
	var out []string
	for _, top := range sortedKeys(dirs) {
		base := filepath.Join(snapDir, top)
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == base && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipAll
				}
				return err
			}
			if p == base {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(snapDir, p)
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !claimed[rel] {
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	sort.Strings(out)
	return out, nil
}
