package oracle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestSpecsLoad: every row of gen/settings.tsv parses, names a script that
// loads, and its switches print back as written.
func TestSpecsLoad(t *testing.T) {
	specs, err := LoadSpecs("gen")
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) < 50 {
		t.Fatalf("%d specs, want the fifty-odd of gen/settings.tsv", len(specs))
	}
	table, err := os.ReadFile(filepath.Join("gen", SettingsTable))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if !strings.Contains(string(table), "\n"+s.Name+"\t"+s.Settings.String()+"\t") {
			t.Errorf("%s: switches print as %q, which is not its row", s.Name, s.Settings.String())
		}
	}
}

// TestParseSettings: each switch, and an unknown or malformed one refused by name.
func TestParseSettings(t *testing.T) {
	s, err := ParseSettings("DSH_PERMISSION_MODE=read-only PROBE_TOOLS_MODE=both PROBE_SPILL=1 PROBE_SQ=1 PROBE_HOOKS=0 PROBE_PACE_MS=100 PROBE_RUNNER=missing")
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Mode: ReadOnly, ToolsMode: ToolsBoth, Spill: true, SessionQuery: true, NoHooks: true, PaceMs: 100, MissingRunner: true}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if got := s.probeEnv(); strings.Join(got, " ") != "PROBE_TOOLS_MODE=both PROBE_SPILL=1 PROBE_SQ=1 PROBE_HOOKS=0 PROBE_PACE_MS=100 PROBE_RUNNER=missing" {
		t.Errorf("probe env %q", got)
	}
	if got := s.scenarioEnv(); len(got) != 1 || got[0] != "DSH_PERMISSION_MODE=read-only" {
		t.Errorf("scenario env %q", got)
	}
	for _, bad := range []string{"DSH_PERMISSION_MODE=root", "PROBE_TOOLS_MODE=native", "PROBE_SPILL=0", "PROBE_PACE_MS=-1", "PROBE_PACE_MS=x", "X=1"} {
		if _, err := ParseSettings(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseSettings(%q) = %v, want an error naming it", bad, err)
		}
	}
}

// TestSettingsOf: the switches upstream's suite ran the transcripts with
// are derived from the recordings themselves; a setting the overlay cannot
// give is refused by name.
func TestSettingsOf(t *testing.T) {
	want := map[string]string{
		"bash-spill":               "PROBE_SPILL=1",
		"session-query-spill":      "PROBE_SPILL=1 PROBE_SQ=1",
		"code-mode-turn":           "PROBE_TOOLS_MODE=code",
		"both-mode-turn":           "PROBE_TOOLS_MODE=both",
		"escalation-approved":      "DSH_PERMISSION_MODE=workspace-write",
		"escalation-rejected":      "DSH_PERMISSION_MODE=workspace-write",
		"fs-escalation-approved":   "DSH_PERMISSION_MODE=workspace-write",
		"fs-read":                  "",
		"background-job-admission": "",
	}
	for name, env := range want {
		rec, err := recording.Load(filepath.Join(root, "transcripts", name))
		if err != nil {
			t.Fatal(err)
		}
		s, err := SettingsOf(rec)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.String() != env {
			t.Errorf("%s: settings %q, want %q", name, s.String(), env)
		}
	}
	rec, err := recording.Load(filepath.Join(root, "testdata", "replay", "ours", "partial-landlock"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SettingsOf(rec); err == nil || !strings.Contains(err.Error(), "sandbox backend") {
		t.Errorf("partial-landlock: %v, want the sandbox backend setting refused", err)
	}
	for name, want := range map[string]string{"pwsh-tool-turn": `profile "pwsh"`, "skill-load": "workspace preparation"} {
		rec, err := recording.Load(filepath.Join(root, "transcripts", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SettingsOf(rec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s refused", name, err, want)
		}
	}
}

// TestFromEnvNamesTheVariable: without DSHSIM_ORACLE, or with a directory
// that is no oracle, the reason names the variable and what is missing.
func TestFromEnvNamesTheVariable(t *testing.T) {
	t.Setenv(Env, "")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "DSHSIM_ORACLE is not set") {
		t.Errorf("unset: %v", err)
	}
	dir := t.TempDir()
	t.Setenv(Env, dir)
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "DSHSIM_ORACLE="+dir) || !strings.Contains(err.Error(), "run.mjs is missing") {
		t.Errorf("empty dir: %v", err)
	}
}
