package oracle

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestHeadlessScriptError: a script that does not fit the unattended path
// (one task, not empty nor starting with "-" (the CLI's flags), no
// answers, no child scripts, the log as the script) is refused, naming
// each reason; one that fits is not.
func TestHeadlessScriptError(t *testing.T) {
	ok := func() *Script {
		return &Script{Prompts: []string{"p"}, Turns: [][]Step{{{Text: "DONE"}}}}
	}
	for _, tc := range []struct {
		name string
		edit func(s *Script)
		want string
	}{
		{"fits", func(*Script) {}, ""},
		{"two prompts", func(s *Script) { s.Prompts = append(s.Prompts, "q") }, "one task"},
		{"no prompt", func(s *Script) { s.Prompts = nil }, "one task"},
		{"input steps", func(s *Script) { s.Steps = []recording.Step{{Op: "waitForTurnEnd"}} }, "one task"},
		{"all steps", func(s *Script) { s.AllSteps = []recording.Step{{Op: "initialize"}} }, "one task"},
		{"answers", func(s *Script) { s.PermissionAnswers = []recording.Answer{{Kind: "allow_once"}} }, "no approval channel"},
		{"children", func(s *Script) { s.Children = []Child{{}} }, "no child scripts"},
		{"override", func(s *Script) { s.Override = json.RawMessage(`[]`) }, "no replay.override.json"},
		{"a task read as a flag", func(s *Script) { s.Prompts = []string{"--dump-config"} }, `starts with "-"`},
		{"a task of one dash", func(s *Script) { s.Prompts = []string{"-"} }, `starts with "-"`},
		{"an empty task", func(s *Script) { s.Prompts = []string{""} }, "neither empty"},
		{"a dash inside", func(s *Script) { s.Prompts = []string{"a -b"} }, ""},
	} {
		s := ok()
		tc.edit(s)
		err := HeadlessScriptError(s)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestRecordHeadlessRefusesSwitches: the headless profile composes its own
// plugins, so a switch other than the mode (and the reminder, which the
// base profile mounts) is refused before upstream runs.
func TestRecordHeadlessRefusesSwitches(t *testing.T) {
	o := &Oracle{dir: t.TempDir()}
	s := &Script{Prompts: []string{"p"}, Turns: [][]Step{{{Text: "DONE"}}}}
	_, err := o.RecordHeadless(context.Background(), "n", s, Options{Settings: Settings{Mode: ReadOnly, MountSettings: MountSettings{Spill: true}}})
	if err == nil || !strings.Contains(err.Error(), "only the permission mode applies") {
		t.Fatalf("spill: %v", err)
	}
	_, err = o.RecordHeadless(context.Background(), "n", &Script{Prompts: []string{"p", "q"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "one task") {
		t.Fatalf("two prompts: %v", err)
	}
}

// TestRecordHeadless records one script through upstream's headless
// profile: upstream reproduces it, the recording is in the headless-profile
// layout (and nothing else), it is classified headless, and the log is the
// unattended path's: the mode's preset at its head and, under
// workspace-write, an approval policy of ask with nobody to ask.
func TestRecordHeadless(t *testing.T) {
	o := needAgent(t)
	s := &Script{Prompts: []string{"Print a marker, then reply DONE."}, Workspace: map[string]string{"a.txt": "alpha\n"},
		Turns: [][]Step{{{Calls: []Call{{Name: "bash", Args: json.RawMessage(`{"command":"cat a.txt; printf HEADLESS_MARK"}`)}}}, {Text: "DONE"}}}}
	rec, err := o.RecordHeadless(context.Background(), "headless-probe", s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Check.Match() {
		t.Fatalf("upstream does not reproduce its own recording: %s\n%s", rec.Check.Verdict(), rec.Check.Files["stderr.txt"])
	}
	want := []string{recording.SettingsFile, recording.SessionExpectedFile, recording.StderrExpectedFile, "workspace/a.txt"}
	if got := slices.Sorted(maps.Keys(rec.Files)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("files %v, want %v", got, want)
	}
	if fe, err := recording.ClassifyFiles("r", slices.Collect(maps.Keys(rec.Files))); err != nil || fe != recording.Headless {
		t.Errorf("classified %q (%v), want headless", fe, err)
	}
	log := string(rec.Files[recording.SessionExpectedFile])
	for _, w := range []string{`"preset":"workspace-write"`, `"policy":"ask"`, "HEADLESS_MARK", `"text":"DONE"`} {
		if !strings.Contains(log, w) {
			t.Errorf("the log lacks %s:\n%s", w, log)
		}
	}
	if len(rec.Files[recording.StderrExpectedFile]) != 0 {
		t.Errorf("stderr %q, want none (a completed run)", rec.Files[recording.StderrExpectedFile])
	}
	if !strings.Contains(string(rec.Files[recording.SettingsFile]), `"prompt": "Print a marker, then reply DONE."`) {
		t.Errorf("settings %s", rec.Files[recording.SettingsFile])
	}
}

// TestHeadlessDriverRefusesAFlagAsTheTask: the installed agent's
// headless.mjs never hands the CLI a task that starts with "-" (a
// recording's dshsim.replay.json is an attacker's: "--dump-config" or
// "--patch FILE" would be read as the launcher's flags); it fails naming
// the task, before upstream runs.
func TestHeadlessDriverRefusesAFlagAsTheTask(t *testing.T) {
	o, err := FromEnv()
	if err != nil {
		t.Skip(err)
	}
	if err := o.SameAgent("agent"); err != nil {
		t.Skip(err) // another tree's driver
	}
	for _, task := range []string{"--dump-config", "-h", ""} {
		dir := t.TempDir()
		settings, _ := json.Marshal(map[string]string{"prompt": task})
		if err := os.WriteFile(filepath.Join(dir, recording.SettingsFile), settings, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(o.node(), filepath.Join(o.agentDir(), headlessScript), dir)
		tmp := t.TempDir()
		cmd.Env = []string{"PROBE_OUT=" + filepath.Join(dir, "out"), "PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), `which the CLI would read as a flag`) || strings.Contains(string(out), "headless: exit") {
			t.Errorf("task %q: %v\n%s", task, err, out)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("task %q: the driver left %s in its temporary directory", task, left[0].Name())
		}
	}
}
