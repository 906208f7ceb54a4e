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
