package escape_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness/escape"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// build compiles a main package of this module into dir (sandboxtest.Build)
// and makes it executable by every identity the corpus runs as.
func build(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	out, err := sandboxtest.Build("", dir, name, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "snapshots", name)
	if os.Getenv("DSHSIM_UPDATE") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (DSHSIM_UPDATE=1 creates it)", path, err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-golden +got); DSHSIM_UPDATE=1 updates it:\n%s", path, d)
	}
}

// env is the built binaries and scratch base shared by the corpus tests.
type env struct {
	base, probe, runner string
	abi                 int
}

var (
	envOnce sync.Once
	shared  env
	envErr  string
)

func setup(t *testing.T) env {
	t.Helper()
	envOnce.Do(func() {
		base, err := escape.MkBase()
		if err != nil {
			envErr = err.Error()
			return
		}
		bin := filepath.Join(base, "bin")
		if err := os.Mkdir(bin, 0o755); err != nil {
			envErr = err.Error()
			return
		}
		shared = env{base: base,
			probe:  build(t, bin, "github.com/dshsim/dshsim/harness/escape/cmd/escape-probe", "escape-probe"),
			runner: build(t, bin, sandboxtest.RunnerPackage, "landlock-run")}
		shared.abi, err = escape.KernelABI(context.Background(), shared.runner)
		if err != nil {
			envErr = err.Error()
		}
	})
	if envErr != "" {
		t.Fatal(envErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.base != "" {
		os.RemoveAll(shared.base)
	}
	os.Exit(code)
}

var corpus struct {
	once sync.Once
	rs   []escape.Result
	err  error
	text []byte
}

// runCorpus runs the whole corpus under bwrap and the Landlock runner (both
// through the real sandbox provider), as every identity, in both modes.
func runCorpus(t *testing.T) ([]escape.Result, []byte) {
	t.Helper()
	e := setup(t)
	corpus.once.Do(func() {
		ctx := context.Background()
		attempts, err := escape.Corpus()
		if err != nil {
			corpus.err = err
			return
		}
		bw, err := escape.Bwrap(ctx, e.base)
		if err != nil {
			corpus.err = err
			return
		}
		ll, err := escape.Landlock(ctx, e.runner, e.abi, e.base)
		if err != nil {
			corpus.err = err
			return
		}
		backends := []escape.Backend{bw, ll}
		ids := escape.Identities()
		node, err := noderuntime.New(noderuntime.Config{})
		if err != nil {
			corpus.err = fmt.Errorf("run_code's runtime for the program attempts: %w", err)
			return
		}
		corpus.rs, corpus.err = escape.RunAll(ctx, escape.Config{Base: e.base, Probe: e.probe, Node: node}, attempts, backends, ids)
		corpus.text = escape.Table("escape corpus (go test ./harness/escape -run TestCorpus; DSHSIM_UPDATE=1 updates)", attempts, backends, ids, corpus.rs)
	})
	if corpus.err != nil {
		t.Fatal(corpus.err)
	}
	return corpus.rs, corpus.text
}

func goldenName(base string) string {
	if os.Geteuid() != 0 {
		return strings.TrimSuffix(base, ".txt") + "-nonroot.txt"
	}
	return base
}

func TestCorpusHasAtLeast25Attempts(t *testing.T) {
	attempts, err := escape.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) < 25 {
		t.Fatalf("corpus has %d attempts, want at least 25", len(attempts))
	}
}

func TestCorpusTableMatchesGolden(t *testing.T) {
	_, text := runCorpus(t)
	golden(t, goldenName("escape.txt"), text)
}

func TestCorpusNoUnadmittedEscape(t *testing.T) {
	rs, _ := runCorpus(t)
	for _, r := range escape.Unadmitted(rs) {
		t.Errorf("%s under %s/%s/%s: %s, %s\n  changes: %v\n  stderr: %s", r.Attempt, r.Backend, r.Identity, r.Mode, r.Outcome, r.Why, r.Changes, strings.TrimSpace(r.Stderr))
	}
}

func TestCorpusEveryBackendBlocksThePlainWrite(t *testing.T) {
	rs, _ := runCorpus(t)
	n := 0
	for _, r := range rs {
		if r.Attempt == "plain-write" {
			n++
			if r.Outcome != escape.Blocked {
				t.Errorf("plain-write under %s/%s/%s: %s %v", r.Backend, r.Identity, r.Mode, r.Outcome, r.Changes)
			}
		}
	}
	if n == 0 {
		t.Fatal("plain-write did not run")
	}
}

// TestCorpusUnderCappedABI is layer 1 of the ABI matrix for the corpus: the
// Landlock runner capped at ABI 1..7, as the unprivileged identity (or the
// current user), workspace-write and read-only. Gaps must be admitted by the
// capped runner's own report (the partial notice).
func TestCorpusUnderCappedABI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the corpus seven times; not in -short")
	}
	e := setup(t)
	ctx := context.Background()
	all, err := escape.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	// the run_code programs run in the main corpus only (bwrap, Landlock)
	var attempts []escape.Attempt
	for _, a := range all {
		if !a.Program {
			attempts = append(attempts, a)
		}
	}
	var backends []escape.Backend
	for n := 1; n <= 7; n++ {
		b, err := escape.LandlockCapped(ctx, e.runner, e.abi, n)
		if err != nil {
			t.Fatal(err)
		}
		backends = append(backends, b)
	}
	ids := escape.Identities()
	ids = ids[len(ids)-1:]
	rs, err := escape.RunAll(ctx, escape.Config{Base: e.base, Probe: e.probe}, attempts, backends, ids)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, goldenName("escape-abi.txt"), escape.Table("escape corpus under the Landlock runner capped at ABI 1..7 (go test ./harness/escape -run TestCorpusUnderCappedABI; DSHSIM_UPDATE=1 updates)", attempts, backends, ids, rs))
	for _, r := range escape.Unadmitted(rs) {
		t.Errorf("%s under %s/%s/%s: %s, %s; changes %v", r.Attempt, r.Backend, r.Identity, r.Mode, r.Outcome, r.Why, r.Changes)
	}
}

// TestProgramAttemptsRunAndAreDenied: the run_code program attempts really
// run under every backend and identity (a control program writes inside the
// workspace and reports back), and the outside write fails inside the
// program with the kernel's error, not because Node never started.
func TestProgramAttemptsRunAndAreDenied(t *testing.T) {
	rs, _ := runCorpus(t)
	e := setup(t)
	ctx := context.Background()
	node, err := noderuntime.New(noderuntime.Config{})
	if err != nil {
		t.Fatal(err)
	}
	bw, err := escape.Bwrap(ctx, e.base)
	if err != nil {
		t.Fatal(err)
	}
	ll, err := escape.Landlock(ctx, e.runner, e.abi, e.base)
	if err != nil {
		t.Fatal(err)
	}
	control := escape.Attempt{Name: "control", Program: true, Class: escape.ClassPath,
		Script: `const fs = await import("node:fs"); fs.writeFileSync("$WS/control.txt", "inside"); return process.getuid();`}
	for _, b := range []escape.Backend{bw, ll} {
		for _, id := range escape.Identities() {
			r, err := escape.RunOne(ctx, escape.Config{Base: e.base, Probe: e.probe, Node: node}, control, b, id, "workspace-write")
			if err != nil {
				t.Fatal(err)
			}
			if r.Exit != 0 || r.Stdout != fmt.Sprint(id.UID) {
				t.Errorf("control program under %s/%s: exit %d stdout %q stderr %q", b.Name, id.Name, r.Exit, r.Stdout, r.Stderr)
			}
		}
	}
	n := 0
	for _, r := range rs {
		if r.Attempt != "program-fs-write" {
			continue
		}
		n++
		if r.Exit != 1 || !(strings.Contains(r.Stderr, "EACCES") || strings.Contains(r.Stderr, "EROFS")) {
			t.Errorf("program-fs-write under %s/%s/%s: exit %d stderr %q, want the kernel's refusal", r.Backend, r.Identity, r.Mode, r.Exit, r.Stderr)
		}
	}
	if n == 0 {
		t.Fatal("program-fs-write did not run")
	}
}
