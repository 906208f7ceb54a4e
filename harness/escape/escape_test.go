package escape_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/escape"
	"github.com/dshsim/dshsim/harness/replay/hostile"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
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

// env is the built binaries, the scratch base and, when this process is
// root, a copy of this test binary the unprivileged agent can run.
type env struct {
	escape.Env
	agent string
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
		shared.Base = base
		root, err := harness.FindRoot(".")
		if err != nil {
			envErr = err.Error()
			return
		}
		shared.Transcripts = filepath.Join(root, "transcripts")
		shared.Probe = build(t, bin, "github.com/dshsim/dshsim/harness/escape/cmd/escape-probe", "escape-probe")
		shared.Runner = build(t, bin, sandboxtest.RunnerPackage, "landlock-run")
		shared.KernelABI, err = escape.KernelABI(context.Background(), shared.Runner)
		if err != nil {
			envErr = err.Error()
			return
		}
		if os.Geteuid() == 0 {
			shared.agent, err = copyExecutable(bin, "escape-agent")
			if err != nil {
				envErr = err.Error()
			}
		}
	})
	if envErr != "" {
		t.Fatal(envErr)
	}
	return shared
}

// copyExecutable copies this test binary into dir (world-readable), where
// the unprivileged agent can run it (the build cache may not be readable).
func copyExecutable(dir, name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	return out, os.WriteFile(out, data, 0o755)
}

func TestMain(m *testing.M) {
	if os.Getenv(escape.AgentEnv) == "1" {
		os.Exit(escape.AgentMain(os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	if shared.Base != "" {
		if err := os.RemoveAll(shared.Base); err != nil {
			fmt.Fprintf(os.Stderr, "escape: remove %s: %v\n", shared.Base, err)
			code = 1
		}
	}
	os.Exit(code)
}

// runTable runs corpus attempts under the named backends as every identity
// of escape.Identities: this process's own in-process, and, when root, the
// unprivileged user in an agent process of uid 65534, at the same time.
func runTable(t *testing.T, e env, attempts []escape.Attempt, names []string) ([]escape.Backend, []escape.Result) {
	return runTableOf(t, e, attempts, nil, names)
}

// runTableOf is runTable with attempts given whole besides the corpus's
// (a control program the agent's corpus does not hold).
func runTableOf(t *testing.T, e env, attempts, given []escape.Attempt, names []string) ([]escape.Backend, []escape.Result) {
	t.Helper()
	ctx := context.Background()
	backends, err := escape.NewBackends(ctx, e.Env, names)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, b := range backends {
			b.Close()
		}
	})
	var (
		agentRS  []escape.Result
		agentErr error
		wg       sync.WaitGroup
	)
	if os.Geteuid() == 0 {
		req := escape.AgentRequest{Env: e.Env, Backends: names, Given: given}
		for _, a := range attempts {
			req.Attempts = append(req.Attempts, a.Name)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			agentRS, agentErr = escape.RunAs(ctx, e.agent, escape.User, req)
		}()
	}
	all := append(append([]escape.Attempt(nil), attempts...), given...)
	node, err := escape.NodeFor(all)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := escape.RunAll(ctx, escape.Config{Base: e.Base, Probe: e.Probe, Node: node, Runner: e.Runner, Transcripts: e.Transcripts}, all, backends)
	waittest.Within(t, waittest.BatchDeadline, "the agent's attempts to end", wg.Wait)
	if err != nil {
		t.Fatal(err)
	}
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return backends, append(rs, agentRS...)
}

var corpus struct {
	once sync.Once
	rs   []escape.Result
	err  string
	text []byte
}

// isolationAttempts are the attempts the hardening table runs: the
// isolation ones and the writes beneath .git.
func isolationAttempts(all []escape.Attempt) []escape.Attempt {
	var out []escape.Attempt
	for _, a := range all {
		if a.Class == escape.ClassIsolation || a.Class == escape.ClassGit {
			out = append(out, a)
		}
	}
	return out
}

// withoutClass is all but the attempts of class c.
func withoutClass(all []escape.Attempt, c escape.Class) []escape.Attempt {
	var out []escape.Attempt
	for _, a := range all {
		if a.Class != c {
			out = append(out, a)
		}
	}
	return out
}

// runCorpus runs the whole corpus under bwrap, the Landlock runner and the
// in-process path (through the real sandbox and spawn), then the late
// attempts unconfined (danger-full-access: what changed after the call),
// then the isolation attempts with the opt-in hardening, as every
// identity, in both modes.
func runCorpus(t *testing.T) ([]escape.Result, []byte) {
	t.Helper()
	e := setup(t)
	corpus.once.Do(func() {
		attempts, err := escape.Corpus()
		if err != nil {
			corpus.err = err.Error()
			return
		}
		ids := escape.Identities()
		// workspace-write allows the .git writes without the hardening; the
		// hostile recordings have a table of their own
		main := withoutClass(withoutClass(attempts, escape.ClassGit), escape.ClassRecording)
		backends, rs := runTable(t, e, main, escape.MainBackends)
		corpus.text = escape.Table("escape corpus (go test ./harness/escape -run TestCorpus; DSHSIM_UPDATE=1 updates)", main, backends, ids, rs)
		corpus.rs = rs
		late := escape.LateAttempts(attempts)
		lb, lrs := runTable(t, e, late, escape.LateBackends)
		corpus.text = append(append(corpus.text, '\n'), escape.Table("after the call: the late attempts unconfined, in danger-full-access as an escalated call runs them; only what changed after the call returned counts (confined: their rows in the first table)", late, lb, ids, lrs)...)
		corpus.rs = append(corpus.rs, lrs...)
		if e.KernelABI < 6 {
			corpus.text = append(corpus.text, fmt.Sprintf("\nopt-in hardening: not run (needs Landlock ABI 6, this kernel has %d)\n", e.KernelABI)...)
		} else {
			iso := isolationAttempts(attempts)
			hb, hrs := runTable(t, e, iso, escape.HardeningBackends)
			corpus.text = append(append(corpus.text, '\n'), escape.Table("opt-in hardening (sandbox.Config.Harden, inproc Options.Harden; off by default): the isolation attempts with it (without it: their rows in the first table) and the writes beneath the workspace's .git, which workspace-write allows without it", iso, hb, ids, hrs)...)
			corpus.rs = append(corpus.rs, hrs...)
		}
		rrs, rtext := runRecordings(t)
		corpus.text = append(append(corpus.text, '\n'), rtext...)
		corpus.rs = append(corpus.rs, rrs...)
	})
	if corpus.err != "" {
		t.Fatal(corpus.err)
	}
	if corpus.text == nil {
		t.Fatal("the corpus did not run (an earlier test failed setting it up)")
	}
	return corpus.rs, corpus.text
}

// recordingsTitle begins the hostile-recordings table, the last of
// escape.txt.
const recordingsTitle = "hostile recordings (go test ./harness/escape -run TestCorpusHostileRecordings"

var recordings struct {
	once sync.Once
	rs   []escape.Result
	text []byte
}

// runRecordings runs the hostile recordings (package
// harness/replay/hostile) through dsh-replay's contained replay as every
// identity, once per test binary: the last table of escape.txt, which
// TestCorpusHostileRecordings runs alone.
func runRecordings(t *testing.T) ([]escape.Result, []byte) {
	t.Helper()
	e := setup(t)
	recordings.once.Do(func() {
		attempts, err := escape.Corpus()
		if err != nil {
			t.Fatal(err)
		}
		rec := escape.Recordings(attempts)
		b, rs := runTable(t, e, rec, escape.RecordingBackends)
		recordings.rs = rs
		recordings.text = escape.Table(recordingsTitle+"; DSHSIM_UPDATE=1 with TestCorpus updates): copies of upstream recordings whose hooks, bash calls, file tool calls, run_code programs and runner attack the host, replayed contained; nothing may reach the host", rec, b, escape.Identities(), rs)
	})
	if recordings.text == nil {
		t.Fatal("the hostile recordings did not run (an earlier test failed setting them up)")
	}
	return recordings.rs, recordings.text
}

// goldenCompare compares got with the golden file name under snapshots/
// (harness.Golden); a run that is not root compares the golden without the
// root sections, which it cannot produce (they need root: CAP_SYS_ADMIN,
// CAP_MKNOD and friends), and never writes it.
func goldenCompare(t *testing.T, name string, got []byte) {
	t.Helper()
	dir := filepath.Join("..", "..", harness.SnapshotsDir)
	if os.Geteuid() == 0 {
		harness.Golden(t, dir, name, got)
		return
	}
	t.Logf("not root: comparing %s without its root sections (they need root)", name)
	harness.GoldenPart(t, dir, name, got, func(committed []byte) []byte {
		return []byte(escape.DropIdentity(string(committed), escape.Root.Name))
	})
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

// TestCorpusUnderCappedABI is layer 1 of the ABI matrix for the corpus: the
// Landlock runner and the stack's default Landlock path (in-process) capped
// at ABI 1..5 (6 and 7 build the ruleset of 5), as the unprivileged identity (an
// agent of uid 65534 when this process is root), workspace-write and
// read-only. Gaps must be admitted by the capped runner's own report (the
// partial notice).
func TestCorpusUnderCappedABI(t *testing.T) {
	t.Parallel() // declared first, so it and the main corpus take the first two parallel slots
	if testing.Short() {
		t.Skip("runs the corpus five times; not in -short")
	}
	e := setup(t)
	ctx := context.Background()
	all, err := escape.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	// the isolation attempts are not about file rights; the run_code
	// programs run in the main table only
	var attempts []escape.Attempt
	for _, a := range all {
		if a.Class != escape.ClassIsolation && a.Class != escape.ClassGit && a.Class != escape.ClassRecording && !a.Program {
			attempts = append(attempts, a)
		}
	}
	names := escape.CappedBackends()
	backends, err := escape.NewBackends(ctx, e.Env, names)
	if err != nil {
		t.Fatal(err)
	}
	var rs []escape.Result
	if os.Geteuid() == 0 {
		req := escape.AgentRequest{Env: e.Env, Backends: names}
		for _, a := range attempts {
			req.Attempts = append(req.Attempts, a.Name)
		}
		rs, err = escape.RunAs(ctx, e.agent, escape.User, req)
	} else {
		rs, err = escape.RunAll(ctx, escape.Config{Base: e.Base, Probe: e.Probe}, attempts, backends)
	}
	if err != nil {
		t.Fatal(err)
	}
	ids := []escape.Identity{escape.User}
	goldenCompare(t, "escape-abi.txt", escape.Table("escape corpus under the Landlock runner and the default (in-process) Landlock path, each capped at ABI 1..5 (go test ./harness/escape -run TestCorpusUnderCappedABI; DSHSIM_UPDATE=1 updates)", attempts, backends, ids, rs))
	for _, r := range escape.Unadmitted(rs) {
		t.Errorf("%s under %s/%s/%s: %s, %s; changes %v", r.Attempt, r.Backend, r.Identity, r.Mode, r.Outcome, r.Why, r.Changes)
	}
}

func TestCorpusTableMatchesGolden(t *testing.T) {
	t.Parallel()
	_, text := runCorpus(t)
	goldenCompare(t, "escape.txt", text)
}

func TestCorpusNoUnadmittedEscape(t *testing.T) {
	t.Parallel()
	rs, _ := runCorpus(t)
	for _, r := range escape.Unadmitted(rs) {
		t.Errorf("%s under %s/%s/%s: %s, %s\n  changes: %v\n  stderr: %s", r.Attempt, r.Backend, r.Identity, r.Mode, r.Outcome, r.Why, r.Changes, strings.TrimSpace(r.Stderr))
	}
}

func TestCorpusEveryBackendBlocksThePlainWrite(t *testing.T) {
	t.Parallel()
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
	if n != len(escape.MainBackends)*len(escape.Identities())*len(escape.Modes) {
		t.Fatalf("plain-write ran %d times, want every backend, identity and mode", n)
	}
}

// TestCorpusNothingOutlivesItsCall: the workspace swap race, the leftover
// processes and the late writes ran under every column (the late ones
// unconfined too, as an escalated call) and every identity, and were
// blocked: no redirected grant, no process left running once the call
// returned, no write after it.
func TestCorpusNothingOutlivesItsCall(t *testing.T) {
	t.Parallel()
	rs, _ := runCorpus(t)
	ran := map[string]int{}
	for _, r := range rs {
		switch r.Attempt {
		case "workspace-swap-race", "leftover-processes", "late-write", "detached-daemon":
			ran[r.Attempt]++
			if r.Outcome != escape.Blocked {
				t.Errorf("%s under %s/%s/%s: %s %s %v", r.Attempt, r.Backend, r.Identity, r.Mode, r.Outcome, r.Why, r.Changes)
			}
		}
	}
	confined := len(escape.MainBackends) * len(escape.Identities()) * len(escape.Modes)
	want := map[string]int{"workspace-swap-race": confined, "leftover-processes": confined + len(escape.Identities()), "late-write": confined + len(escape.Identities()), "detached-daemon": confined + len(escape.Identities())}
	for a, n := range want {
		if ran[a] != n {
			t.Errorf("%s ran %d times, want %d (every confined column and identity, and unconfined for a late one)", a, ran[a], n)
		}
	}
}

// TestCorpusHostileRecordings: every hostile recording (package
// harness/replay/hostile) ran its attack to its end through dsh-replay's
// contained replay, or was refused before anything ran, as every identity,
// and nothing reached the host: no change of the run directory or /dev/shm,
// no connection to the listener, no process left, no step the replay's
// results say got through. Its table is the last of escape.txt; this test
// runs it alone (go test ./harness/escape -run TestCorpusHostileRecordings)
// and compares it with that part of the golden.
func TestCorpusHostileRecordings(t *testing.T) {
	t.Parallel()
	isolate.Require(t)
	rs, text := runRecordings(t)
	want := len(hostile.Cases()) * len(escape.Identities())
	if len(rs) != want {
		t.Fatalf("the hostile recordings ran %d times, want %d (every case, once per identity)", len(rs), want)
	}
	for _, r := range rs {
		if r.Outcome != escape.Blocked {
			t.Errorf("%s under %s/%s/%s: %s %s\n  changes: %v\n  results: %s\n  error: %s", r.Attempt, r.Backend, r.Identity, r.Mode, r.Outcome, r.Why, r.Changes, r.Stdout, strings.TrimSpace(r.Stderr))
		}
	}
	part := func(committed []byte) []byte {
		i := bytes.Index(committed, []byte("\n"+recordingsTitle))
		if i < 0 {
			t.Errorf("escape.txt has no table starting %q (DSHSIM_UPDATE=1 go test ./harness/escape -run TestCorpus writes it)", recordingsTitle)
			return nil
		}
		committed = committed[i+1:]
		if os.Geteuid() != 0 {
			committed = []byte(escape.DropIdentity(string(committed), escape.Root.Name))
		}
		return committed
	}
	harness.GoldenPart(t, filepath.Join("..", "..", harness.SnapshotsDir), "escape.txt", text, part)
}

// TestCorpusRootHoldsNoCapability: what only a capability allows (chown to
// another user, the immutable and append-only flags, trusted.* and
// security.* attributes) is blocked as root under every backend, the
// Landlock ones included: they drop every capability before the command
// starts. The Ungoverned list admits chown and setxattr as far as the
// command's credentials allow, so without this check a root command that
// kept its capabilities would read as admitted.
func TestCorpusRootHoldsNoCapability(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root (uid 0): the attempts need CAP_CHOWN, CAP_LINUX_IMMUTABLE and CAP_SYS_ADMIN to mean anything")
	}
	rs, _ := runCorpus(t)
	capped := map[string]bool{"chown-out": true, "chattr-immutable": true, "chattr-append": true, "setxattr-trusted": true, "setxattr-security": true}
	n := 0
	for _, r := range rs {
		if capped[r.Attempt] && r.Identity == escape.Root.Name {
			n++
			if r.Outcome != escape.Blocked {
				t.Errorf("%s under %s/root/%s: %s %v: the command kept a capability", r.Attempt, r.Backend, r.Mode, r.Outcome, r.Changes)
			}
		}
	}
	if n != len(capped)*len(escape.MainBackends)*len(escape.Modes) {
		t.Fatalf("the capability attempts ran %d times as root, want every backend and mode", n)
	}
}

// TestProgramAttemptsRunAndAreDenied: the run_code program attempts really
// run under every main backend and identity (a control program writes
// inside the workspace and reports its uid back), and the outside write
// fails inside the program with the kernel's error, not because node never
// started.
func TestProgramAttemptsRunAndAreDenied(t *testing.T) {
	t.Parallel()
	rs, _ := runCorpus(t)
	e := setup(t)
	control := escape.Attempt{Name: "control", Program: true, Class: escape.ClassPath, Attack: "a control program",
		Script: "const fs = await import(\"node:fs\");\nlet wrote = \"wrote\";\ntry { fs.writeFileSync(\"$WS/control.txt\", \"inside\"); } catch (e) { wrote = e.code; }\nreturn `${process.getuid()} ${wrote}`;\n"}
	_, crs := runTableOf(t, e, nil, []escape.Attempt{control}, escape.MainBackends)
	for _, r := range crs {
		uid := 0
		if r.Identity == escape.User.Name {
			uid = os.Geteuid()
			if uid == 0 {
				uid = escape.User.UID
			}
		}
		// the workspace write succeeds in workspace-write; read-only refuses
		// it (bwrap's read-only bind: EROFS, Landlock: EACCES)
		want := []string{fmt.Sprintf("%q", fmt.Sprintf("%d wrote", uid))}
		if r.Mode == sandbox.ReadOnly {
			want = []string{fmt.Sprintf("%q", fmt.Sprintf("%d EACCES", uid)), fmt.Sprintf("%q", fmt.Sprintf("%d EROFS", uid))}
		}
		if r.Exit != 0 || !slices.Contains(want, r.Stdout) || r.Outcome != escape.Blocked {
			t.Errorf("control program under %s/%s/%s: %s exit %d stdout %q (want one of %q) stderr %q", r.Backend, r.Identity, r.Mode, r.Outcome, r.Exit, r.Stdout, want, r.Stderr)
		}
	}
	if len(crs) != len(escape.MainBackends)*len(escape.Identities())*len(escape.Modes) {
		t.Fatalf("the control program ran %d times, want every backend, identity and mode", len(crs))
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
	if n != len(escape.MainBackends)*len(escape.Identities())*len(escape.Modes) {
		t.Fatalf("program-fs-write ran %d times, want every backend, identity and mode", n)
	}
}
