package sims

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

// landlockRunsLayout is where the docs page includes landlock-runs.txt:
// lines 1-28, 30-44 and 46-57 (blank lines 29 and 45 between).
var landlockRunsLayout = []int{28, 15, 12}

type sandboxSim struct {
	env      *harness.Env
	ws       string // workspace (under the scratch root, see newWorkspace)
	runner   string // built landlock-run
	norm     *harness.Normalizer
	landlock *sandbox.Provider
}

// scratchDir makes a run directory for the sim name under the scratch root
// (sandboxtest.ScratchRoot): outside /tmp, since Landlock's workspace-write
// grants the host /tmp wholesale, so a workspace or an "outside" target there
// could not show the workspace boundary. It is held until release removes
// it; a killed run's is removed by the next dsh-sim run
// (harness.RemoveDeadRuns).
func scratchDir(name string) (dir string, release func(), err error) {
	root, err := sandboxtest.ScratchRoot()
	if err != nil {
		return "", nil, err
	}
	return harness.MkdirRun(root, name)
}

// newWorkspace makes a workspace, ws/ in a scratch directory of its own
// ([scratchDir]); release removes it.
func newWorkspace() (ws string, release func(), err error) {
	parent, release, err := scratchDir("sandbox")
	if err != nil {
		return "", nil, err
	}
	ws = filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		release()
		return "", nil, err
	}
	return ws, release, nil
}

// The sandbox sim: profiles (pure), the real runner's probe, confine() and
// real runs under Landlock, fail-closed, and failure classification.
func runSandbox(env *harness.Env) (map[string][]byte, error) {
	env.Logf("sandbox: building landlock-run")
	binDir, runner, err := buildRunner(env)
	if err != nil {
		return nil, err
	}
	ws, release, err := newWorkspace()
	if err != nil {
		return nil, err
	}
	defer release()
	s := &sandboxSim{env: env, ws: ws, runner: runner,
		norm: harness.NewNormalizer().Workspace(ws).Path(binDir, "<bin>")}
	s.landlock, err = sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{sandbox.BackendLandlock}, LauncherPath: runner})
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"txt/profiles.txt": []byte(profilesDump("<ws>"))}
	steps := []struct {
		name string
		fn   func() (string, error)
	}{
		{"txt/probe.txt", s.probe},
		{"txt/confine.txt", s.confine},
		{"txt/landlock-runs.txt", s.runs},
		{"txt/unavailable.txt", s.unavailable},
		{"txt/classify.txt", s.classify},
	}
	var full strings.Builder
	full.WriteString("# sandbox sim: every effect file of the sandbox layer, in order\n\n== txt/profiles.txt: the profile builders (pure) ==\n")
	full.Write(files["txt/profiles.txt"])
	for _, st := range steps {
		text, err := st.fn()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.name, err)
		}
		text = s.norm.String(text)
		files[st.name] = []byte(text)
		fmt.Fprintf(&full, "\n== %s ==\n%s", st.name, text)
	}
	bw, err := s.bwrapRuns()
	if err != nil {
		return nil, fmt.Errorf("bwrap runs: %w", err)
	}
	fmt.Fprintf(&full, "\n== bwrap: the same kind of runs through the default chain's first backend, pinned (only in this file) ==\n%s", s.norm.String(bw))
	dp, err := s.defaultPathRuns()
	if err != nil {
		return nil, fmt.Errorf("default Landlock path runs: %w", err)
	}
	fmt.Fprintf(&full, "\n== the stack's default Landlock path: the same kind of runs confined in this process, as on a host without bwrap (only in this file) ==\n%s", s.norm.String(dp))
	files["out/sandbox.txt"] = []byte(full.String())
	if err := checkLayout(string(files["txt/landlock-runs.txt"]), landlockRunsLayout); err != nil {
		return nil, fmt.Errorf("txt/landlock-runs.txt: %w", err)
	}
	return files, nil
}

// checkLayout fails unless text is sections of exactly the given line counts
// separated by single blank lines.
func checkLayout(text string, sizes []int) error {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	at := 0
	for i, n := range sizes {
		if at+n > len(lines) {
			return fmt.Errorf("section %d (lines %d-%d) runs past the end (%d lines)", i+1, at+1, at+n, len(lines))
		}
		for j := at; j < at+n; j++ {
			if lines[j] == "" {
				return fmt.Errorf("section %d (lines %d-%d) has a blank line %d", i+1, at+1, at+n, j+1)
			}
		}
		at += n
		if i < len(sizes)-1 {
			if at >= len(lines) || lines[at] != "" {
				return fmt.Errorf("line %d must be blank after section %d", at+1, i+1)
			}
			at++
		}
	}
	if at != len(lines) {
		return fmt.Errorf("%d lines, want %d", len(lines), at)
	}
	return nil
}

func (s *sandboxSim) probe() (string, error) {
	var b strings.Builder
	out, code := runCapture(s.runner, "--probe")
	fmt.Fprintf(&b, "$ landlock-run --probe\n%sexit: %d\n", out, code)
	abi, code := runCapture(s.runner, "--abi")
	fmt.Fprintf(&b, "$ landlock-run --abi   # machine-dependent: the Landlock ABI of this kernel\n%sexit: %d\n\n", abi, code)
	chain := sandbox.Chain("linux")
	pinned, err := s.pinnedProvider()
	if err != nil {
		return "", err
	}
	s.reportDefaultChain()
	backend, enf := pinned.Selected()
	fmt.Fprintf(&b, "default chain on linux: %s (the first backend whose probe passes is selected)\n", strings.Join(chain, " → "))
	fmt.Fprintf(&b, "pinned by this sim to the first backend, %s (bubblewrap is installed), without its probe: a probe that fails on a loaded machine cannot change this file\n", chain[0])
	fmt.Fprintf(&b, "selected: %s (enforcement %s)\n", backend, enf)
	for _, m := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		w, err := pinned.Confine(context.Background(), []string{"bash", "-c", "echo hi"}, sandbox.Policy{Mode: m, WorkspaceRoot: s.ws})
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s: %s\n", m, shellQuote(w.Argv))
	}
	return b.String(), nil
}

// pinnedProvider is the provider of the files that show bwrap: the chain
// pinned to bwrap alone (a one-backend chain runs no probe), so a transient
// probe failure cannot flip them to Landlock. Without bubblewrap installed
// the sim fails, naming what it needs.
func (s *sandboxSim) pinnedProvider() (*sandbox.Provider, error) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return nil, fmt.Errorf("the sandbox sim shows bwrap, the default chain's first backend, and needs bubblewrap installed: %w", err)
	}
	return sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{sandbox.BackendBwrap}, LauncherPath: s.runner})
}

// reportDefaultChain runs the real default chain's probes and, when they do
// not select bwrap, says why on the log (never in an effect file): the
// provider a real session gets here would run under another backend.
func (s *sandboxSim) reportDefaultChain() {
	def, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", LauncherPath: s.runner})
	if err != nil {
		s.env.Logf("sandbox: the default chain: %v", err)
		return
	}
	if backend, _ := def.Selected(); backend != sandbox.BackendBwrap {
		for _, o := range def.Probed() {
			if o.Err != nil {
				s.env.Logf("sandbox: the default chain's probe of %s failed: %v", o.Backend, o.Err)
			}
		}
		s.env.Logf("sandbox: the default chain selected %q here, not bwrap; the effect files show bwrap, pinned", backend)
	}
}

// hermeticEnv is the environment of the runs whose output the effect files
// show: a fixed PATH, so the runner's execvp of a command that does not exist
// reports ENOENT for every user (a PATH holding a directory the user may not
// search, such as root's, turns it into EACCES, "Permission denied").
var hermeticEnv = []string{"PATH=/usr/bin:/bin", "LANG=C"}

func runCapture(name string, args ...string) (string, int) {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	code, err := exitStatus(cmd.Run())
	if err != nil {
		return "error: " + err.Error() + "\n", -1
	}
	return out.String(), code
}

// exitStatus is the exit code of a finished command: 0, or the code of an
// *exec.ExitError; err itself when the command did not run at all.
func exitStatus(err error) (int, error) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}

func (s *sandboxSim) confine() (string, error) {
	w, err := s.landlock.Confine(context.Background(), []string{"bash", "-c", "echo hi"}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: s.ws})
	if err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return "", err
	}
	// The device and inode the workspace root is pinned to are this
	// machine's: shown as <dev>:<ino>.
	return strings.ReplaceAll(string(b), `"`+w.Policy.WorkspaceID.String()+`"`, `"<dev>:<ino>"`) + "\n", nil
}

// entry runs one command under the Landlock provider and renders it as
// "$ command", "exit: ...", "the model gets:" (inline when one line).
func (s *sandboxSim) entry(b *strings.Builder, p spawn.Confiner, mode sandbox.Mode, cmd, note string) error {
	_, err := s.entrySame(b, p, mode, cmd, note, "")
	return err
}

// entrySame is entry; when the model text equals prev it says "the same as
// above" instead of repeating it. It returns the model text.
func (s *sandboxSim) entrySame(b *strings.Builder, p spawn.Confiner, mode sandbox.Mode, cmd, note, prev string) (string, error) {
	res, err := spawn.Run(context.Background(), spawn.Request{Argv: []string{"bash", "-c", cmd}, Policy: sandbox.Policy{Mode: mode, WorkspaceRoot: s.ws}, Confiner: p})
	fmt.Fprintf(b, "$ %s%s\n", cmd, note)
	var text, exit string
	var ue *sandbox.UnavailableError
	switch {
	case errors.As(err, &ue):
		exit = "exit: none (the sandbox runner failed; the command never ran: " + sandbox.ErrorCode + ")"
		text = "Error: " + pipeline.ErrorMessage(err)
	case err != nil:
		return "", err
	default:
		exit = fmt.Sprintf("exit: %d", res.ExitCode)
		switch {
		case res.Sandbox.Denied:
			exit += " (denied by the sandbox)"
		case res.ExitCode != 0:
			exit += " (the command's own failure)"
		}
		text = strings.TrimSuffix(render.Result(render.Foreground{
			ExitCode: res.ExitCode, Signaled: res.Signaled, Signal: res.Signal, TimedOut: res.TimedOut,
			Stdout: render.Stream(res.Stdout), Stderr: render.Stream(res.Stderr), Sandbox: res.Sandbox,
		}, true), "\n")
	}
	if text == prev {
		fmt.Fprintf(b, "%s · the model gets: the same as above\n", exit)
		return text, nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s · the model gets: %s\n", exit, text)
		return text, nil
	}
	fmt.Fprintf(b, "%s · the model gets:\n", exit)
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	return text, nil
}

func (s *sandboxSim) runs() (string, error) {
	_, enf := s.landlock.Selected()
	var b strings.Builder
	ww, ro := sandbox.WorkspaceWrite, sandbox.ReadOnly
	fmt.Fprintf(&b, "# workspace-write · Landlock (landlock-run, enforcement %s) · workspace <ws> · \"the model gets\" is the rendered result\n", enf)
	for _, c := range []string{
		"echo hi > notes.txt && cat notes.txt",
		`mkdir -p src && printf 'package main\n' > src/main.go && find . -type f | sort`,
		`printf 'done\n' >> notes.txt && wc -l < notes.txt`,
		"echo scratch > /tmp/dshsim-$$.txt && cat /tmp/dshsim-$$.txt && rm /tmp/dshsim-$$.txt",
		"echo hi > /dev/null",
		"echo hi > ../outside.txt",
		"echo 'export X=1' >> /etc/profile",
	} {
		if err := s.entry(&b, s.landlock, ww, c, ""); err != nil {
			return "", err
		}
	}
	b.WriteString("# on the host afterwards: " + s.onDisk("notes.txt", "src/main.go", "../outside.txt") + "\n\n")

	// The three kinds of failure, same provider and mode.
	prev, err := s.entrySame(&b, s.landlock, ww, "grep TODO notes.txt", "   # no match", "")
	if err != nil {
		return "", err
	}
	if _, err := s.entrySame(&b, s.landlock, ww, "false", "", prev); err != nil {
		return "", err
	}
	if err := s.entry(&b, s.landlock, ww, "echo hi > ../outside.txt", ""); err != nil {
		return "", err
	}
	missing := filepath.Join(s.ws, ".dsh-missing-runner", "landlock-run")
	broken, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{sandbox.BackendLandlock}, LauncherPath: missing})
	if err != nil {
		return "", err
	}
	if err := s.entry(&b, broken, ww, "echo hi", "   # launcher path <ws>/.dsh-missing-runner/landlock-run does not exist"); err != nil {
		return "", err
	}
	b.WriteString("\n")

	b.WriteString("# read-only · the same provider and workspace\n")
	for _, c := range []string{"wc -l < notes.txt", "echo more >> notes.txt", "echo hi > /dev/null"} {
		if err := s.entry(&b, s.landlock, ro, c, ""); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// bwrapRuns runs a few commands through bwrap, the default chain's first
// backend, pinned (see pinnedProvider).
func (s *sandboxSim) bwrapRuns() (string, error) {
	p, err := s.pinnedProvider()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# workspace-write · bwrap (pinned) · /tmp is a fresh tmpfs inside the sandbox\n")
	for _, c := range []string{
		"echo hi > bwrap.txt && cat bwrap.txt",
		"echo tmp > /tmp/dshsim-$$.txt && cat /tmp/dshsim-$$.txt",
		"echo hi > ../outside.txt",
	} {
		if err := s.entry(&b, p, sandbox.WorkspaceWrite, c, ""); err != nil {
			return "", err
		}
	}
	b.WriteString("# on the host afterwards: " + s.onDisk("bwrap.txt", "../outside.txt") + "\n")
	b.WriteString("# read-only · bwrap\n")
	for _, c := range []string{"echo more >> notes.txt", "echo hi > /dev/null"} {
		if err := s.entry(&b, p, sandbox.ReadOnly, c, ""); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// defaultPathRuns runs a few commands through the stack's confiner on a
// host without bwrap (package sandbox/chain, Landlock alone): in this
// process, with the runner's results byte for byte, the partial notice
// included when capped; and through the runner when the configuration asks
// for it, the reason in the report.
func (s *sandboxSim) defaultPathRuns() (string, error) {
	var b strings.Builder
	for _, v := range []struct {
		cfg  chain.Config
		cmds []string
	}{
		{chain.Config{}, []string{"echo hi > inproc.txt && cat inproc.txt", "echo hi > ../outside.txt"}},
		{chain.Config{Sandbox: sandbox.Config{LandlockABICap: 3}}, []string{"false"}},
		{chain.Config{Runner: true}, []string{"echo hi > runner.txt && cat runner.txt"}},
	} {
		v.cfg.Sandbox.Platform, v.cfg.Sandbox.Chain, v.cfg.Sandbox.LauncherPath = "linux", []string{sandbox.BackendLandlock}, s.runner
		c, err := chain.New(v.cfg)
		if err != nil {
			return "", err
		}
		w, err := c.Confine(context.Background(), []string{"true"}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: s.ws})
		if err != nil {
			c.Close()
			return "", err
		}
		how := "started from a restricted thread of this process, argv as given"
		if w.Start == nil {
			how = "argv wrapped in " + w.Argv[0]
		}
		fmt.Fprintf(&b, "# workspace-write · backend %s, enforcement %s · %s", w.Backend, w.Enforcement, how)
		if v.cfg.Sandbox.LandlockABICap > 0 {
			fmt.Fprintf(&b, " · capped at ABI %d", v.cfg.Sandbox.LandlockABICap)
		}
		if w.Fallback != "" {
			fmt.Fprintf(&b, " · fallback: %s", w.Fallback)
		}
		b.WriteString("\n")
		for _, cmd := range v.cmds {
			if err := s.entry(&b, c, sandbox.WorkspaceWrite, cmd, ""); err != nil {
				c.Close()
				return "", err
			}
		}
		c.Close()
	}
	b.WriteString("# on the host afterwards: " + s.onDisk("inproc.txt", "runner.txt", "../outside.txt") + "\n")
	return b.String(), nil
}

// onDisk reports which of the workspace-relative paths exist on the host.
func (s *sandboxSim) onDisk(paths ...string) string {
	var parts []string
	for _, p := range paths {
		state := "present"
		if _, err := os.Stat(filepath.Join(s.ws, p)); err != nil {
			state = "absent"
		}
		parts = append(parts, p+" "+state)
	}
	return strings.Join(parts, ", ")
}

func (s *sandboxSim) unavailable() (string, error) {
	missing := filepath.Join(s.ws, ".dsh-missing-runner", "landlock-run")
	ranMarker := filepath.Join(s.ws, "ran.txt")
	p, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", LauncherPath: missing,
		Probes: sandbox.Probes{Bwrap: func(context.Context) bool { return false }}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("provider: linux chain bwrap → landlock\n")
	b.WriteString("  bwrap: constructed as absent (this machine has bubblewrap; the sim hides it)\n")
	b.WriteString("  landlock: real probe of <ws>/.dsh-missing-runner/landlock-run (does not exist)\n")
	b.WriteString("$ confine([\"bash\", \"-c\", \"echo hi > ran.txt\"], {mode: \"workspace-write\", workspaceRoot: \"<ws>\"})\n")
	policy := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: s.ws}
	argv := []string{"bash", "-c", "echo hi > ran.txt"}
	if _, err = p.Confine(context.Background(), argv, policy); err == nil {
		return "", errors.New("confine succeeded with no usable backend")
	}
	// The executor asks the same provider (verdict cached) and refuses too.
	if _, startErr := spawn.Start(context.Background(), spawn.Request{Argv: argv, Policy: policy, Confiner: p}); startErr == nil || startErr.Error() != err.Error() {
		return "", fmt.Errorf("executor did not refuse with the same error: %v", startErr)
	}
	name, code, _ := pipeline.CodeOf(err)
	fmt.Fprintf(&b, "error name: %s\nerror code: %s\nthe model gets:\n  Error: %s\n", name, code, pipeline.ErrorMessage(err))
	if _, statErr := os.Stat(ranMarker); statErr == nil {
		return "", errors.New("the command ran")
	}
	b.WriteString("nothing ran: <ws>/ran.txt absent\n")
	return b.String(), nil
}

func (s *sandboxSim) classify() (string, error) {
	w, err := s.landlock.Confine(context.Background(), []string{"true"}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: s.ws})
	if err != nil {
		return "", err
	}
	real := w.RunnerFailureRules
	prefixOnly := []sandbox.RunnerFailureRule{{FatalSignatures: []string{"landlock-run: "}}}
	rj, _ := json.Marshal(real)
	var b strings.Builder
	b.WriteString("samples: real runs of landlock-run --abi-cap 4 (it prints the partial notice, as on an older kernel), workspace-write\n")
	fmt.Fprintf(&b, "real rules (from confine()): %s\n", rj)
	b.WriteString(`prefix only (constructed, as before postmortem 0004): any "landlock-run: " line + non-zero exit = runner broken` + "\n")
	grants := sandbox.LandlockArgs(sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: s.ws})
	samples := []struct {
		label string
		args  []string
	}{
		{"false", []string{"--", "bash", "-c", "false"}},
		{"grep TODO notes.txt   (no match)", []string{"--", "bash", "-c", "grep TODO notes.txt"}},
		{"exit 125   (the command's own 125)", []string{"--", "bash", "-c", "exit 125"}},
		{"echo hi > ../outside.txt   (a denial)", []string{"--", "bash", "-c", "echo hi > ../outside.txt"}},
		{"no-such-command   (exec fails)", []string{"--", "dshsim-no-such-command"}},
		{"--rw <ws>/missing   (rule path cannot be opened)", append([]string{"--rw", filepath.Join(s.ws, "missing")}, "--", "true")},
	}
	for i, sm := range samples {
		args := append([]string{"--abi-cap", "4"}, grants...)
		args = append(args, sm.args...)
		var stderr bytes.Buffer
		cmd := exec.Command(s.runner, args...)
		cmd.Dir, cmd.Stderr, cmd.Env = s.ws, &stderr, hermeticEnv
		code, err := exitStatus(cmd.Run())
		if err != nil {
			return "", err
		}
		verdict := func(rules []sandbox.RunnerFailureRule) string {
			if d, ok := sandbox.ClassifyRunnerFailure(code, false, stderr.String(), rules); ok {
				return "runner failed (" + strconvQuote(d) + ")"
			}
			if sandbox.IsDenial(code, false, stderr.String(), w.DenialSignatures) {
				return "denied"
			}
			return "the command's own exit " + fmt.Sprint(code)
		}
		a, p := verdict(real), verdict(prefixOnly)
		mark := ""
		switch {
		case a == p:
		case strings.HasPrefix(a, "runner failed") && strings.HasPrefix(p, "runner failed"):
			mark = "   ← wrong detail"
		default:
			mark = "   ← misreported"
		}
		fmt.Fprintf(&b, "%d. %s\n   exit %d, stderr %s\n   real rules:  %s\n   prefix only: %s%s\n",
			i+1, sm.label, code, strconvQuote(stderr.String()), a, p, mark)
	}
	return b.String(), nil
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
