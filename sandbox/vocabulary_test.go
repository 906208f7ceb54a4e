package sandbox

import (
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox/landlock"
)

// TestRunnerVocabulary: the lines this package reads from the runner are the
// ones the runner prints (each side declares them; neither imports the other).
func TestRunnerVocabulary(t *testing.T) {
	for _, c := range []struct{ ours, runner string }{
		{LandlockPartialNotice, landlock.PartialNotice},
		{landlockProbeFull, landlock.ProbeFull},
		{landlockProbePartial, landlock.ProbePartial},
	} {
		if c.ours != c.runner {
			t.Errorf("sandbox reads %q, the runner prints %q", c.ours, c.runner)
		}
	}
}

func TestUnavailableError(t *testing.T) {
	err := error(&UnavailableError{Mode: WorkspaceWrite})
	name, code, ok := pipeline.CodeOf(err)
	if !ok || name != "SandboxUnavailableError" || code != "SANDBOX_UNAVAILABLE" {
		t.Errorf("Info = %q %q %v", name, code, ok)
	}
	msg := err.Error()
	if !strings.Contains(msg, `"workspace-write"`) || !strings.Contains(msg, "danger-full-access") || strings.Contains(msg, "Runner failure") {
		t.Errorf("message without detail: %q", msg)
	}
	withDetail := (&UnavailableError{Mode: ReadOnly, Detail: "landlock-run: landlock is not enforced by this kernel"}).Error()
	if !strings.HasSuffix(withDetail, "danger-full-access. Runner failure: landlock-run: landlock is not enforced by this kernel") {
		t.Errorf("message with detail: %q", withDetail)
	}
}

func TestMarkers(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{name: "denial marker read-only", got: DenialMarker(ReadOnly), want: "[sandbox: file access denied under read-only mode]"},
		{name: "denial marker workspace-write", got: DenialMarker(WorkspaceWrite), want: "[sandbox: file access denied under workspace-write mode]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q want %q", tc.got, tc.want)
			}
		})
	}
	if !strings.Contains(EscalationHint("command"), "retry this exact command once with sandbox_permissions") ||
		!strings.Contains(EscalationHint("operation"), "retry this exact operation once with sandbox_permissions") {
		t.Error("escalation hint subject")
	}
}
