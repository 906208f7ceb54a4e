package oracle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestInputFacts: vitest for any step beyond initialize, newSession and
// prompt; a session only with a newSession step.
func TestInputFacts(t *testing.T) {
	for _, tc := range []struct {
		input string
		want  inputFacts
	}{
		{`{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"p"}]}`, inputFacts{session: true}},
		{`{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"promptAndCancel","text":"p"}]}`, inputFacts{vitest: true, session: true}},
		{`{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"promptExpectError","text":"p"}]}`, inputFacts{vitest: true, session: true}},
		{`{"steps":[{"op":"initialize"},{"op":"newSessionExpectError","additionalDirectories":["/x"]}]}`, inputFacts{vitest: true}},
		{`{"steps":[{"op":"initialize"}]}`, inputFacts{}},
	} {
		got, err := factsOf([]byte(tc.input))
		if err != nil || got != tc.want {
			t.Errorf("factsOf(%s) = %+v, %v; want %+v", tc.input, got, err, tc.want)
		}
	}
	if _, err := factsOf([]byte(`{"steps":`)); err == nil || !strings.Contains(err.Error(), recording.InputFile) {
		t.Errorf("a broken input.json: %v", err)
	}
}

// TestVerdict: MATCH only when stdout, the log and every child log match;
// a scenario without a session says no log was compared.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{StdoutMatch: true, SessionMatch: true}, "MATCH"},
		{Outcome{StdoutMatch: true, SessionMatch: true, NoLog: true}, "MATCH (no session: no log compared)"},
		{Outcome{SessionMatch: true, NoLog: true}, "DIFF (stdout)"},
		{Outcome{StdoutMatch: true}, "DIFF (session.jsonl)"},
		{Outcome{}, "DIFF (stdout, session.jsonl)"},
		{Outcome{StdoutMatch: true, SessionMatch: true, ChildMatch: map[string]bool{"session.1.jsonl": true, "session.2.jsonl": true}}, "MATCH"},
		{Outcome{StdoutMatch: true, SessionMatch: true, ChildMatch: map[string]bool{"session.2.jsonl": false, "session.1.jsonl": true, "session.10.jsonl": false}}, "DIFF (session.10.jsonl, session.2.jsonl)"},
	} {
		if got := tc.o.Verdict(); got != tc.want || tc.o.Match() != (tc.want[:5] == "MATCH") {
			t.Errorf("%+v: %s (match %v), want %s", tc.o, got, tc.o.Match(), tc.want)
		}
	}
}

// TestReplayWithoutSession: upstream's run of a recording whose input opens
// no session writes no log; the header-only fixture is not compared (as
// upstream's suite compares no log without a model turn), stdout is.
func TestReplayWithoutSession(t *testing.T) {
	o := need(t)
	res, err := o.Replay(context.Background(), filepath.Join(root, "testdata", "replay", "oracle", "reject-extra-dirs"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Match() || !res.NoLog || !res.StdoutMatch {
		t.Errorf("%s (no log %v; %v)", res.Verdict(), res.NoLog, res.Report)
	}
	if _, ok := res.RawSession(0); ok {
		t.Error("upstream wrote a session log for an input without newSession")
	}
}

// TestOptionsAgentRuns: Options.Agent runs the given agent directory, not
// the oracle's agent/: its run.mjs (the oracle's, with one line that writes
// where it ran into PROBE_OUT) runs with the oracle's modules, from a
// directory outside the oracle that the isolated child is given.
func TestOptionsAgentRuns(t *testing.T) {
	o := need(t)
	agent := filepath.Join(t.TempDir(), "agent")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(o.agentDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(o.agentDir(), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "run.mjs" {
			b = append(b, "\nawait writeFile(join(outDir, \"agent.txt\"), here);\n"...)
		}
		if err := os.WriteFile(filepath.Join(agent, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(o.Dir(), "dsh08", "node_modules"), filepath.Join(agent, "node_modules")); err != nil {
		t.Fatal(err)
	}
	res, err := o.Replay(context.Background(), filepath.Join(root, "transcripts", "bash-tool-turn"), Options{Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Match() {
		t.Errorf("upstream's replay through the given agent: %s", res.Verdict())
	}
	if got := string(res.Files["agent.txt"]); got != agent+"/" {
		t.Errorf("run.mjs ran from %q, want the given agent %s/ (files: %d)", got, agent, len(res.Files))
	}
}

// TestRunsHaveTheirOwnHome: upstream's hook commands source ~/.bashrc when
// the caller's SHLVL is 0 (a command started in the background by a
// subshell): Node gives a hook's bash a socket for stdin, so bash takes
// itself for a remote shell. A run gets an empty HOME of its own, so what
// the caller's rc file prints never reaches a recording.
func TestRunsHaveTheirOwnHome(t *testing.T) {
	o := need(t)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("echo CALLERS-RC >&2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SHLVL", "0")
	hooks := `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"cat > /dev/null; echo HOOK-RAN >&2; exit 1"}]}]}}`
	s := &Script{Prompts: []string{"Say DONE."}, Workspace: map[string]string{"hooks.json": hooks}, Turns: [][]Step{{{Text: "DONE"}}}}
	rec, err := o.Record(context.Background(), "own-home", s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := string(rec.Files[recording.SessionFile])
	if !strings.Contains(log, "HOOK-RAN") {
		t.Fatalf("the hook's stderr is not in the log:\n%s", log)
	}
	if strings.Contains(log, "CALLERS-RC") {
		t.Errorf("the caller's ~/.bashrc ran in upstream's hook:\n%s", log)
	}
}

// TestEnvKeepsNoSecret: upstream's run gets no variable whose name is a
// secret's, nor the caller's own PROBE_, DSH_ or HOME; the rest passes.
func TestEnvKeepsNoSecret(t *testing.T) {
	t.Setenv("DSHSIM_TEST_API_KEY", "k")
	t.Setenv("DSHSIM_TEST_TOKEN", "t")
	t.Setenv("DSH_PERMISSION_MODE", "read-only")
	t.Setenv("DSHSIM_TEST_PLAIN", "p")
	env := strings.Join((&Oracle{dir: t.TempDir()}).env(Settings{}, "out", "home"), "\n") + "\n"
	for _, gone := range []string{"DSHSIM_TEST_API_KEY=", "DSHSIM_TEST_TOKEN=", "DSH_PERMISSION_MODE="} {
		if strings.Contains(env, gone) {
			t.Errorf("%s reaches upstream", gone)
		}
	}
	for _, kept := range []string{"DSHSIM_TEST_PLAIN=p\n", "HOME=home\n", "PROBE_OUT=out\n"} {
		if !strings.Contains(env, kept) {
			t.Errorf("%q does not reach upstream", kept)
		}
	}
}
