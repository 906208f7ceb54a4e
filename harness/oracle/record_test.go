package oracle

import (
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestNotesOverlayLines: each turn switch adds its overlay line to NOTES.md,
// as the recordings made before the Go generator say it, and only its own;
// an input without newSession says the log is the header alone.
func TestNotesOverlayLines(t *testing.T) {
	lines := map[string]string{
		"reminder":     "dsh-repeat-tool-reminder mounted with its default thresholds (as dsh-base mounts it)",
		"instructions": `dsh-agent-instructions mounted (maxBytes 65536, dshHome $DSH_HOME = <cwd>/.dsh, projectRootMarkers PROBE_INSTRUCTION_MARKERS or [".git"]), the default profile's workspaceContext`,
		"retry":        "dsh-llm-retry mounted and the replay provider deepseek-official given the retryPolicy of PROBE_RETRY (as EX/retry.cordis*.yml does)",
	}
	const noSession = "- the input has no newSession: no session, so no log (session.jsonl is the header the script's encoding wrote; upstream compares no log for such a scenario)\n"
	session := recording.Input{Steps: []recording.Step{{Op: "initialize"}, {Op: "newSession"}, {Op: "prompt", Text: "p"}}}
	for name, set := range map[string]Settings{
		"reminder":     {MountSettings: MountSettings{Reminder: true}},
		"instructions": {InstructionSettings: InstructionSettings{Instructions: true, InstructionMarkers: `[".x"]`}},
		"retry":        {Retry: `{"mode":"always"}`},
	} {
		md := string(Notes{Name: "n", Origin: "o", Remark: "r", Settings: set}.Markdown(session))
		for other, line := range lines {
			if got := strings.Contains(md, "workspace); "+line+"\n"); got != (other == name) {
				t.Errorf("%s: the %s line shown %v:\n%s", name, other, got, md)
			}
		}
		if !strings.Contains(md, "- probe env: `"+set.String()+"`\n") || strings.Contains(md, noSession) {
			t.Errorf("%s: probe env or a no-session line wrong:\n%s", name, md)
		}
	}
	for _, tc := range []struct {
		steps []recording.Step
		want  bool
	}{
		{[]recording.Step{{Op: "initialize"}, {Op: "newSessionExpectError"}}, true},
		{[]recording.Step{{Op: "initialize"}}, true},
		{session.Steps, false},
	} {
		md := string(Notes{Name: "n"}.Markdown(recording.Input{Steps: tc.steps}))
		if got := strings.Contains(md, "- probe env: `(none)`\n"+noSession+"\nCaveat"); got != tc.want {
			t.Errorf("%v: the no-session line after the probe env %v, want %v:\n%s", tc.steps, got, tc.want, md)
		}
	}
}

// TestStableCountsEveryChildLog: a recording whose check reproduces the
// session's log but not a child's is unstable, unless the child's differs
// from what the refresh harvested only where no re-run agrees (an event
// time a text prints); a child log the refresh itself did not match is
// never excused.
func TestStableCountsEveryChildLog(t *testing.T) {
	const parent = `{"type":"turn/start","seq":1}` + "\n"
	child := func(splice bool, stamp string) []byte {
		s := `{"type":"hook/invoked","seq":4}` + "\n"
		if splice {
			s += `{"type":"agent/inbox/spliced","seq":5,"text":"plain stdout"}` + "\n"
		}
		return []byte(s + `{"type":"tool/result","text":"at ` + stamp + `"}` + "\n")
	}
	const t1, t2 = "2026-12-07T19:06:01.123Z", "2026-12-07T19:06:02.456Z"
	for _, tc := range []struct {
		name                  string
		checkChild, refChild  []byte
		childMatch, refreshOK bool
		parentStamp           string
		want                  bool
	}{
		{"every log reproduced", child(true, t1), child(true, t1), true, true, "", true},
		{"a child's hook context spliced elsewhere", child(false, t1), child(true, t1), false, true, "", false},
		{"a child's event time alone", child(true, t2), child(true, t1), false, true, "", true},
		{"the session's event time alone", child(true, t1), child(true, t1), true, true, t2, true},
		{"a child the refresh did not match", child(true, t2), child(true, t1), false, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			harvest := []byte(parent)
			if tc.parentStamp != "" {
				harvest = []byte(`{"type":"turn/start","seq":1,"text":"` + tc.parentStamp + `"}` + "\n")
			}
			fixture := []byte(`{"type":"turn/start","seq":1` + map[bool]string{true: `,"text":"` + t1 + `"`, false: ""}[tc.parentStamp != ""] + "}\n")
			rec := &Recorded{
				Refresh: &Outcome{StdoutMatch: true, SessionMatch: true, ChildMatch: map[string]bool{"session.1.jsonl": tc.refreshOK},
					Files: map[string][]byte{"harvest.1.norm.jsonl": tc.refChild}},
				Check: &Outcome{StdoutMatch: true, SessionMatch: tc.parentStamp == "", ChildMatch: map[string]bool{"session.1.jsonl": tc.childMatch},
					Files: map[string][]byte{"harvest.norm.jsonl": harvest, "fixture.norm.jsonl": fixture, "harvest.1.norm.jsonl": tc.checkChild}},
			}
			if got := rec.Stable(); got != tc.want {
				t.Errorf("Stable() = %v, want %v", got, tc.want)
			}
		})
	}
}
