package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
)

// TestSpecsLoad: every row of gen/settings.tsv parses, names a script that
// loads, and its switches print back as written.
func TestSpecsLoad(t *testing.T) {
	specs := genSpecs(t)
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
	want := Settings{Mode: ReadOnly, ToolsMode: ToolsBoth, MountSettings: MountSettings{Spill: true, SessionQuery: true, NoHooks: true}, PaceMs: 100, MissingRunner: true}
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

// TestTurnSwitches: the reminder, instructions (with their markers) and
// retry switches parse to their fields, print back as written, reach the
// agent's environment, and a malformed value is refused by name with the
// reason.
func TestTurnSwitches(t *testing.T) {
	const retry = `{"mode":"normal","maxRetries":1,"backoff":{"initialDelayMs":1,"maxDelayMs":1,"jitterRatio":0}}`
	for _, tc := range []struct {
		env  string
		want Settings
	}{
		{"PROBE_REMINDER=1", Settings{MountSettings: MountSettings{Reminder: true}}},
		{"PROBE_INSTRUCTIONS=1", Settings{InstructionSettings: InstructionSettings{Instructions: true}}},
		{`PROBE_INSTRUCTIONS=1 PROBE_INSTRUCTION_MARKERS=[".dsh-project",".git"]`, Settings{InstructionSettings: InstructionSettings{Instructions: true, InstructionMarkers: `[".dsh-project",".git"]`}}},
		{"PROBE_RETRY=" + retry, Settings{Retry: retry}},
		{`PROBE_RETRY={"mode":"always"}`, Settings{Retry: `{"mode":"always"}`}},
		{`PROBE_RETRY={"mode":"normal","retryableCodes":["AUTH"]}`, Settings{Retry: `{"mode":"normal","retryableCodes":["AUTH"]}`}},
		{"DSH_PERMISSION_MODE=workspace-write PROBE_TODO=1 PROBE_REMINDER=1 PROBE_INSTRUCTIONS=1 PROBE_RETRY=" + retry,
			Settings{Mode: WorkspaceWrite, MountSettings: MountSettings{Todo: true, Reminder: true}, InstructionSettings: InstructionSettings{Instructions: true}, Retry: retry}},
		{"PROBE_SUBAGENTS=1", Settings{SubagentSettings: SubagentSettings{Subagents: true}}},
		{"DSH_PERMISSION_MODE=workspace-write PROBE_SUBAGENTS=1 PROBE_MAX_DEPTH=2", Settings{Mode: WorkspaceWrite, SubagentSettings: SubagentSettings{Subagents: true, MaxDepth: 2}}},
		{"PROBE_TOOLS_MODE=code PROBE_IMAGE=1", Settings{ToolsMode: ToolsCode, MountSettings: MountSettings{Image: true}}},
	} {
		s, err := ParseSettings(tc.env)
		if err != nil {
			t.Errorf("ParseSettings(%s): %v", tc.env, err)
			continue
		}
		if s != tc.want {
			t.Errorf("ParseSettings(%s) = %+v, want %+v", tc.env, s, tc.want)
		}
		if s.String() != tc.env {
			t.Errorf("ParseSettings(%s).String() = %s", tc.env, s.String())
		}
		probe := strings.Join(s.probeEnv(), " ")
		if want := strings.TrimPrefix(tc.env, "DSH_PERMISSION_MODE=workspace-write "); probe != want {
			t.Errorf("%s: probe env %s, want %s", tc.env, probe, want)
		}
	}
	for _, tc := range []struct{ env, bad, why string }{
		{"PROBE_REMINDER=0", "PROBE_REMINDER=0", "not one of"},
		{"PROBE_INSTRUCTIONS=true", "PROBE_INSTRUCTIONS=true", "not one of"},
		{`PROBE_INSTRUCTION_MARKERS=[".git"]`, `PROBE_INSTRUCTION_MARKERS=[".git"]`, "only PROBE_INSTRUCTIONS=1 mounts"},
		{`PROBE_INSTRUCTIONS=1 PROBE_INSTRUCTION_MARKERS=.git`, "PROBE_INSTRUCTION_MARKERS=.git", "want a JSON list"},
		{`PROBE_INSTRUCTIONS=1 PROBE_INSTRUCTION_MARKERS=[]`, "PROBE_INSTRUCTION_MARKERS=[]", "at least one marker"},
		{`PROBE_INSTRUCTIONS=1 PROBE_INSTRUCTION_MARKERS=[""]`, `PROBE_INSTRUCTION_MARKERS=[""]`, "none empty"},
		{`PROBE_INSTRUCTIONS=1 PROBE_INSTRUCTION_MARKERS=[".git"][".x"]`, `PROBE_INSTRUCTION_MARKERS=[".git"][".x"]`, "more than one JSON value"},
		{`PROBE_INSTRUCTIONS=1 PROBE_INSTRUCTION_MARKERS=['.git']`, `PROBE_INSTRUCTION_MARKERS=['.git']`, "want a JSON list"},
		{`PROBE_RETRY=`, `PROBE_RETRY=`, "want a retry policy"},
		{`PROBE_RETRY={"mode":"sometimes"}`, `PROBE_RETRY={"mode":"sometimes"}`, `mode: want "normal" or "always"`},
		{`PROBE_RETRY={"maxRetries":1}`, `PROBE_RETRY={"maxRetries":1}`, `mode: want "normal" or "always", got ""`},
		{`PROBE_RETRY={"mode":"normal","tries":1}`, `PROBE_RETRY={"mode":"normal","tries":1}`, `unknown field "tries"`},
		{`PROBE_RETRY={"maxRetries":1,"mode":"normal"}`, `PROBE_RETRY={"maxRetries":1,"mode":"normal"}`, `write it as {"mode":"normal","maxRetries":1}`},
		{`PROBE_RETRY={"mode":"normal","backoff":{"initialDelayMs":1.0}}`, `PROBE_RETRY={"mode":"normal","backoff":{"initialDelayMs":1.0}}`, `write it as {"mode":"normal","backoff":{"initialDelayMs":1}}`},
		{"PROBE_SUBAGENTS=0", "PROBE_SUBAGENTS=0", "not one of"},
		{"PROBE_MAX_DEPTH=2", "PROBE_MAX_DEPTH=2", "only PROBE_SUBAGENTS=1 mounts"},
		{"PROBE_SUBAGENTS=1 PROBE_MAX_DEPTH=0", "PROBE_MAX_DEPTH=0", "want a depth cap >= 1"},
		{"PROBE_SUBAGENTS=1 PROBE_MAX_DEPTH=02", "PROBE_MAX_DEPTH=02", "want a depth cap >= 1"},
	} {
		_, err := ParseSettings(tc.env)
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(tc.bad)) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseSettings(%s) = %v, want an error naming %s: %s", tc.env, err, tc.bad, tc.why)
		}
	}
}

// TestSettingsOfKeptRecordings: every recording the oracle made says the
// switches of its row of gen/settings.tsv, where it can: the reminder and
// the instructions by their messages, the retry policy in its
// dshsim.replay.json.
func TestSettingsOfKeptRecordings(t *testing.T) {
	specs := genSpecs(t)
	n := 0
	seen := Settings{}
	for _, s := range specs {
		rec, err := recording.Load(filepath.Join(root, "testdata", "replay", "oracle", s.Name))
		if errors.Is(err, fs.ErrNotExist) || err != nil && strings.Contains(err.Error(), "missing file") {
			continue // not kept: upstream does not reproduce it
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := SettingsOf(rec)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if got != s.Settings {
			t.Errorf("%s: SettingsOf says %q, its row %q", s.Name, got, s.Settings)
		}
		seen.Reminder = seen.Reminder || got.Reminder
		seen.Instructions = seen.Instructions || got.Instructions
		seen.Retry += got.Retry
		n++
	}
	if n < 50 || !seen.Reminder || !seen.Instructions || seen.Retry == "" {
		t.Errorf("%d recordings, reminder %v, instructions %v, retry %q: want the fifty-odd kept, the three switches among them", n, seen.Reminder, seen.Instructions, seen.Retry)
	}
}

// TestSettingsOfWorkspaceContext: workspaceContext mounts the instructions
// with its markers (the default [".git"] unsaid); a bound or a compaction
// the overlay cannot give is refused by name.
func TestSettingsOfWorkspaceContext(t *testing.T) {
	zero, other := 0, 4096
	for _, tc := range []struct {
		name string
		w    recording.WorkspaceContext
		want string
	}{
		{"markers", recording.WorkspaceContext{ProjectRootMarkers: []string{".dsh-project"}}, `PROBE_INSTRUCTIONS=1 PROBE_INSTRUCTION_MARKERS=[".dsh-project"]`},
		{"default markers", recording.WorkspaceContext{ProjectRootMarkers: []string{".git"}}, "PROBE_INSTRUCTIONS=1"},
		{"no markers", recording.WorkspaceContext{}, "PROBE_INSTRUCTIONS=1"},
		{"off", recording.WorkspaceContext{MaxBytes: &zero}, ""},
		{"bound", recording.WorkspaceContext{MaxBytes: &other}, "error: workspaceContext maxBytes 4096"},
		{"compaction", recording.WorkspaceContext{CompactBaselineAtRead: "a.txt"}, "error: workspaceContext compactBaselineAtRead"},
		{"white space", recording.WorkspaceContext{ProjectRootMarkers: []string{"my root"}}, "error: " + `["my root"] holds white space`},
	} {
		rec := &recording.Recording{Name: tc.name, SettingsSource: recording.SettingsSource{Settings: recording.Settings{WorkspaceContext: &tc.w}}}
		s, err := SettingsOf(rec)
		if why, refused := strings.CutPrefix(tc.want, "error: "); refused {
			if err == nil || !strings.Contains(err.Error(), tc.name+": "+why) {
				t.Errorf("%s: %q, %v; want an error containing %q", tc.name, s, err, why)
			}
		} else if err != nil || s.String() != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, s, err, tc.want)
		}
	}
}

// TestSettingsOf: the switches upstream's suite ran the transcripts with
// are derived from the recordings themselves; a setting the overlay cannot
// give is refused by name.
func TestSettingsOf(t *testing.T) {
	want := map[string]string{
		"bash-spill":                "PROBE_SPILL=1",
		"session-query-spill":       "PROBE_SPILL=1 PROBE_SQ=1",
		"code-mode-turn":            "PROBE_TOOLS_MODE=code",
		"both-mode-turn":            "PROBE_TOOLS_MODE=both",
		"escalation-approved":       "DSH_PERMISSION_MODE=workspace-write",
		"escalation-rejected":       "DSH_PERMISSION_MODE=workspace-write",
		"fs-escalation-approved":    "DSH_PERMISSION_MODE=workspace-write",
		"fs-read":                   "",
		"background-job-admission":  "",
		"subagent-spawn-in-process": "PROBE_SUBAGENTS=1",
		"workflow-run":              "PROBE_SUBAGENTS=1",
	}
	for name, env := range want {
		rec := recordingtest.Load(t, filepath.Join(root, "transcripts", name))
		s, err := SettingsOf(rec)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.String() != env {
			t.Errorf("%s: settings %q, want %q", name, s.String(), env)
		}
	}
	rec := recordingtest.Load(t, filepath.Join(root, goalWrapupRel))
	if s, err := SettingsOf(rec); err != nil || s.String() != "" {
		t.Errorf("goal-wrapup: %q %v, want no switch (the goal front end mounts the goal plugins)", s, err)
	}
	rec.Frontend = recording.ACP // profile goal on the plain ACP agent: the overlay has no such switch
	if _, err := SettingsOf(rec); err == nil || !strings.Contains(err.Error(), `profile "goal"`) {
		t.Errorf("profile goal outside the goal front end: %v, want it refused", err)
	}
	rec = recordingtest.Load(t, filepath.Join(root, "testdata", "replay", "ours", "partial-landlock"))
	if _, err := SettingsOf(rec); err == nil || !strings.Contains(err.Error(), "sandbox backend") {
		t.Errorf("partial-landlock: %v, want the sandbox backend setting refused", err)
	}
	for name, want := range map[string]string{"pwsh-tool-turn": `profile "pwsh"`, "skill-load": "workspace preparation",
		"subagent-report": `subagentFixture "report-fence"`, "subagent-child-question-rejection": "askUser"} {
		rec := recordingtest.Load(t, filepath.Join(root, "transcripts", name))
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

// TestReplaySettingsOfKeptRecordings: the dshsim.replay.json ReplaySettings
// writes for each kept recording's row says what the kept one says (its
// note aside), and the recording with it derives the row again; the retry
// policy and the instructions' markers are among them.
func TestReplaySettingsOfKeptRecordings(t *testing.T) {
	specs := genSpecs(t)
	n := 0
	for _, s := range specs {
		rec, err := recording.Load(filepath.Join(root, "testdata", "replay", "oracle", s.Name))
		if err != nil {
			continue // not kept (TestSettingsOfKeptRecordings loads them all)
		}
		kept := rec.Settings
		var got recording.Settings
		if b := ReplaySettings(s.Settings, kept.EventTimes); b != nil {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("%s: %s: %v", s.Name, b, err)
			}
		}
		kept.Note, got.Note = "", ""
		if diff := cmp.Diff(kept, got); diff != "" {
			t.Errorf("%s: dshsim.replay.json differs (-kept +written):\n%s", s.Name, diff)
		}
		rec.Settings = got
		if again, err := SettingsOf(rec); err != nil || again != s.Settings {
			t.Errorf("%s: with the written settings, SettingsOf says %q, %v; want its row %q", s.Name, again, err, s.Settings)
		}
		n++
	}
	if n < 50 {
		t.Errorf("%d recordings compared, want the fifty-odd kept", n)
	}
	markers := ReplaySettings(Settings{InstructionSettings: InstructionSettings{Instructions: true, InstructionMarkers: `[".dsh-project"]`}}, false)
	var got recording.Settings
	if err := json.Unmarshal(markers, &got); err != nil || got.WorkspaceContext == nil || !slices.Equal(got.WorkspaceContext.ProjectRootMarkers, []string{".dsh-project"}) ||
		!strings.Contains(got.Note, "PROBE_INSTRUCTION_MARKERS") {
		t.Errorf("markers: %s (%v)", markers, err)
	}
	if b := ReplaySettings(Settings{MountSettings: MountSettings{Reminder: true}, InstructionSettings: InstructionSettings{Instructions: true}}, false); b != nil {
		t.Errorf("the reminder and the instructions need no replay settings, got %s", b)
	}
}

// genSpecs are the specs of gen/; the test fails where they do not load.
func genSpecs(t *testing.T) []Spec {
	t.Helper()
	specs, err := LoadSpecs("gen")
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// TestLoadHeadlessSpecs: gen/headless.tsv's rows load as headless specs
// (no table: none); a row with a switch beyond the permission mode, or
// whose script does not fit the unattended path, is refused naming the
// file and line.
func TestLoadHeadlessSpecs(t *testing.T) {
	one := `{"prompts":["Run it."],"turns":[[{"text":"DONE"}]]}`
	two := `{"prompts":["Run it.","Again."],"turns":[[{"text":"DONE"}],[{"text":"DONE"}]]}`
	tests := []struct{ name, row, script, want string }{
		{"a mode and the reminder", "h\tDSH_PERMISSION_MODE=read-only PROBE_REMINDER=1\tr", one, ""},
		{"no switch", "h\t\tr", one, ""},
		{"a switch of the ACP agent", "h\tPROBE_SPILL=1\tr", one, "headless.tsv:2: a headless spec's switches are the permission mode alone"},
		{"two prompts", "h\t\tr", two, "headless.tsv:2: a headless run takes a script that fits the unattended path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gen := t.TempDir()
			if specs, err := LoadHeadlessSpecs(gen); err != nil || specs != nil {
				t.Fatalf("no table: %v, %v", specs, err)
			}
			os.MkdirAll(filepath.Join(gen, SpecsDir), 0o755)
			os.WriteFile(filepath.Join(gen, SpecsDir, "h.json"), []byte(tc.script), 0o644)
			os.WriteFile(filepath.Join(gen, HeadlessTable), []byte("# header\n"+tc.row+"\n"), 0o644)
			specs, err := LoadHeadlessSpecs(gen)
			switch {
			case tc.want == "" && (err != nil || len(specs) != 1 || !specs[0].Headless):
				t.Fatalf("specs %+v, %v", specs, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want one naming %q", err, tc.want)
			}
		})
	}
}
