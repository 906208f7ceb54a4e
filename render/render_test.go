package render

import (
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
)

func TestResult(t *testing.T) {
	denied := &sandbox.Report{Mode: sandbox.ReadOnly, Denied: true, Enforcement: sandbox.Full}
	hint := sandbox.EscalationHint("command")
	tests := []struct {
		name       string
		in         Foreground
		advertised bool
		want       string
	}{
		{"stdout passes through unchanged", Foreground{Stdout: Stream{Text: "hello\n"}}, false, "hello\n"},
		{"no output renders placeholder", Foreground{}, false, "(no output)"},
		{"stderr only has section header", Foreground{Stderr: Stream{Text: "err\n"}}, false, "[stderr]\nerr\n"},
		{"stderr separated by newline when stdout lacks one", Foreground{Stdout: Stream{Text: "out"}, Stderr: Stream{Text: "err"}}, false, "out\n[stderr]\nerr"},
		{"stderr directly after newline-terminated stdout", Foreground{Stdout: Stream{Text: "out\n"}, Stderr: Stream{Text: "err\n"}}, false, "out\n[stderr]\nerr\n"},
		{"non-zero exit marker after newline", Foreground{ExitCode: 3, Stdout: Stream{Text: "failing"}}, false, "failing\n[exit code: 3]"},
		{"exit marker does not double newline", Foreground{ExitCode: 3, Stdout: Stream{Text: "failing\n"}}, false, "failing\n[exit code: 3]"},
		{"zero exit has no marker", Foreground{ExitCode: 0, Stdout: Stream{Text: "ok"}}, false, "ok"},
		{"signal without timeout", Foreground{Signaled: true, Signal: "SIGKILL", ExitCode: 9}, false, "(no output)\n[killed by signal: SIGKILL]"},
		{"timeout then signal in order", Foreground{TimedOut: true, TimeoutMs: 100, Signaled: true, Signal: "SIGTERM"}, false, "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"trapped timeout has no exit marker", Foreground{TimedOut: true, TimeoutMs: 50, Stdout: Stream{Text: "trapped\n"}}, false, "trapped\n[timed out after 50ms]"},
		{"timeout before kill with exit code", Foreground{TimedOut: true, TimeoutMs: 50, ExitCode: 143}, false, "(no output)\n[timed out after 50ms]\n[exit code: 143]"},
		{"a fraction of a millisecond as JavaScript prints it", Foreground{TimedOut: true, TimeoutMs: 0.5, Signaled: true, Signal: "SIGTERM"}, false, "(no output)\n[timed out after 0.5ms]\n[killed by signal: SIGTERM]"},
		{"a tiny timeout in JavaScript's exponent form", Foreground{TimedOut: true, TimeoutMs: 1e-9}, false, "(no output)\n[timed out after 1e-9ms]"},
		{"truncation pointer names spill path", Foreground{Stdout: Stream{Text: "tail", Truncated: true, FullPath: "/tmp/x.log"}}, false, "tail\n[output truncated; full output: /tmp/x.log]"},
		{"truncation fallback is unavailable", Foreground{Stdout: Stream{Text: "tail", Truncated: true}}, false, "tail\n[output truncated; full output: (unavailable)]"},
		{"truncated stderr pointer inside stderr section", Foreground{Stderr: Stream{Text: "e", Truncated: true, FullPath: "/s"}}, false, "[stderr]\ne\n[output truncated; full output: /s]"},
		{"denial marker before exit without hint when not advertised", Foreground{ExitCode: 1, Sandbox: denied}, false, "(no output)\n" + sandbox.DenialMarker(sandbox.ReadOnly) + "\n[exit code: 1]"},
		{"denial marker then hint when advertised", Foreground{ExitCode: 1, Sandbox: denied}, true, "(no output)\n" + sandbox.DenialMarker(sandbox.ReadOnly) + "\n" + hint + "\n[exit code: 1]"},
		{"undenied sandbox adds nothing", Foreground{Stdout: Stream{Text: "x"}, Sandbox: &sandbox.Report{Mode: sandbox.WorkspaceWrite}}, true, "x"},
		{"stopped marker before signal", Foreground{Stopped: "user", Signaled: true, Signal: "SIGTERM"}, false, "(no output)\n[stopped: user]\n[killed by signal: SIGTERM]"},
		{"marker-like output is not parsed", Foreground{Stdout: Stream{Text: "[exit code: 7]"}}, false, "[exit code: 7]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Result(tt.in, tt.advertised); got != tt.want {
				t.Errorf("Result() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJobRead(t *testing.T) {
	tests := []struct {
		name string
		in   Delta
		want string
	}{
		{"verbatim delta", Delta{Stdout: "a\nb"}, "a\nb"},
		{"stderr section in delta", Delta{Stdout: "a", Stderr: "e\n"}, "a\n[stderr]\ne\n"},
		{"loss notice with paths", Delta{Stdout: "x\n", Lossy: true, FullOutputPaths: []string{"/o.log", "/e.log"}}, "x\n[some output was dropped from memory; full output: /o.log, /e.log]"},
		{"loss notice unavailable", Delta{Stdout: "x", Lossy: true}, "x\n[some output was dropped from memory; full output: (unavailable)]"},
		{"notice alone", Delta{Lossy: true}, "[some output was dropped from memory; full output: (unavailable)]"},
		{"nothing new is empty", Delta{}, ""},
		{"runner failure instead of denial", Delta{Sandbox: &sandbox.Report{Mode: sandbox.ReadOnly, RunnerFailed: true, Denied: true}}, sandbox.RunnerFailedMarker(sandbox.ReadOnly)},
		{"denial with hint", Delta{Stdout: "o", Sandbox: &sandbox.Report{Mode: sandbox.WorkspaceWrite, Denied: true}}, "o\n" + sandbox.DenialMarker(sandbox.WorkspaceWrite) + "\n" + sandbox.EscalationHint("command")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JobRead(tt.in, true); got != tt.want {
				t.Errorf("JobRead() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	sb := &sandbox.Report{Mode: sandbox.ReadOnly, Denied: true}
	tests := []struct {
		name       string
		o          Outcome
		sb         *sandbox.Report
		advertised bool
		status     string
		detail     string
	}{
		{"signal", Outcome{Killed: true, Signal: "SIGTERM"}, nil, false, "killed", "signal: SIGTERM"},
		{"killed before exit", Outcome{Killed: true}, nil, false, "killed", "killed before exit"},
		{"exit code", Outcome{ExitCode: 2}, nil, false, "completed", "exit code: 2"},
		{"zero exit", Outcome{}, nil, false, "completed", "exit code: 0"},
		{"exit detail carries denial note", Outcome{ExitCode: 1}, sb, false, "completed", "exit code: 1; " + sandbox.DenialMarker(sandbox.ReadOnly)},
		{"exit detail carries denial and hint joined by space", Outcome{ExitCode: 1}, sb, true, "completed", "exit code: 1; " + sandbox.DenialMarker(sandbox.ReadOnly) + " " + sandbox.EscalationHint("command")},
		{"killed detail keeps notes out", Outcome{Killed: true}, &sandbox.Report{Mode: sandbox.ReadOnly, RunnerFailed: true}, true, "killed", "killed before exit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.o.Status(); got != tt.status {
				t.Errorf("Status() = %q, want %q", got, tt.status)
			}
			if got := JobDetail(tt.o, tt.sb, tt.advertised); got != tt.detail {
				t.Errorf("JobDetail() = %q, want %q", got, tt.detail)
			}
		})
	}
}

func TestPromoted(t *testing.T) {
	tests := []struct {
		name           string
		stdout, stderr Stream
		want           string
	}{
		{"no output so far", Stream{}, Stream{}, "[still running after 10ms; moved to background job bash-3]\nThe command keeps running in the background. You will be notified when it finishes; read newer output with job_output, stop it with job_kill."},
		{"output is newline terminated", Stream{Text: "a"}, Stream{Text: "b"}, "a\n[stderr]\nb\n[still running after 10ms; moved to background job bash-3]\nThe command keeps running in the background. You will be notified when it finishes; read newer output with job_output, stop it with job_kill."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Promoted(tt.stdout, tt.stderr, 10, "bash-3"); got != tt.want {
				t.Errorf("Promoted() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPromotedPrintsTheTimeoutAsJavaScript: the promoted notice prints the
// model's timeout as JavaScript prints the number.
func TestPromotedPrintsTheTimeoutAsJavaScript(t *testing.T) {
	got := Promoted(Stream{}, Stream{}, 0.5, "bash-1")
	if !strings.HasPrefix(got, "[still running after 0.5ms; moved to background job bash-1]\n") {
		t.Errorf("Promoted = %q", got)
	}
}
