package escape_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/sandbox/escape"
)

// build compiles a main package of this module into dir and returns the path.
func build(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
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

func TestCorpus(t *testing.T) {
	attempts, err := escape.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) < 25 {
		t.Fatalf("corpus has %d attempts, want at least 25", len(attempts))
	}
	base, err := escape.MkBase()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	bin := filepath.Join(base, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := build(t, bin, "github.com/dshsim/dshsim/sandbox/escape/cmd/escape-probe", "escape-probe")
	ctx := context.Background()
	var backends []escape.Backend
	bw, err := escape.Bwrap(ctx, base)
	if err != nil {
		t.Fatalf("bwrap must be usable on this machine: %v", err)
	}
	runner := build(t, bin, "github.com/dshsim/dshsim/cmd/landlock-run", "landlock-run")
	abi, err := escape.KernelABI(ctx, runner)
	if err != nil {
		t.Fatal(err)
	}
	ll, err := escape.Landlock(ctx, runner, abi, base)
	if err != nil {
		t.Fatalf("the Landlock runner must be usable on this machine: %v", err)
	}
	backends = append(backends, bw, ll)
	cfg := escape.Config{Base: base, Probe: probe, Logf: t.Logf}
	ids := escape.Identities()
	rs, err := escape.RunAll(ctx, cfg, attempts, backends, ids)
	if err != nil {
		t.Fatal(err)
	}
	table := escape.Table("escape corpus (go test ./sandbox/escape -run TestCorpus; DSHSIM_UPDATE=1 updates)", attempts, backends, ids, rs)
	name := "escape.txt"
	if os.Geteuid() != 0 {
		name = "escape-nonroot.txt"
	}
	golden(t, name, table)
	for _, r := range escape.Unadmitted(rs) {
		t.Errorf("%s under %s/%s/%s: %s, %s\n  changes: %v\n  stderr: %s", r.Attempt, r.Backend, r.Identity, r.Mode, r.Outcome, r.Why, r.Changes, strings.TrimSpace(r.Stderr))
	}
}
