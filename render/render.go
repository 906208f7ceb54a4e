package render

import (
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/sandbox"
)

// Stream is one captured output stream of a process.
type Stream struct {
	// Text is the retained text (the tail when Truncated).
	Text string
	// Truncated reports that only the tail of the stream was kept in memory.
	Truncated bool
	// FullPath is the file holding the complete stream; "" when unavailable.
	// The field set is sandbox/spawn's Stream, so a captured stream converts
	// with render.Stream(s).
	FullPath string
}

// Foreground is one finished foreground execution.
type Foreground struct {
	// ExitCode is the process exit code (ignored when Signaled).
	ExitCode int
	// Signaled reports that the process was killed by Signal.
	Signaled bool
	// Signal is the signal name, e.g. "SIGTERM".
	Signal string
	// TimedOut reports that the call's timeout expired.
	TimedOut bool
	// TimeoutMs is the timeout that applied, in milliseconds: the model's
	// number as given (a fraction of a millisecond included), printed as
	// JavaScript prints a number.
	TimeoutMs float64
	// Stdout and Stderr are the captured streams.
	Stdout, Stderr Stream
	// Sandbox is the report of a confined run; nil for unconfined runs (no
	// sandbox marker can appear).
	Sandbox *sandbox.Report
	// Stopped, when non-empty, is why the job was stopped from outside the call.
	Stopped string
}

// Subject is the escalation-hint subject of the bash tool.
const Subject = "command"

// StreamText renders one stream: its text plus, when truncated, the pointer to
// the full output.
func StreamText(s Stream) string {
	if !s.Truncated {
		return s.Text
	}
	p := s.FullPath
	if p == "" {
		p = "(unavailable)"
	}
	return s.Text + "\n[output truncated; full output: " + p + "]"
}

// Body renders stdout and the "[stderr]" section, without markers; it is ""
// when both streams are empty.
func Body(stdout, stderr string) string {
	body := stdout
	if stderr != "" {
		if body != "" && !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		body += "[stderr]\n" + stderr
	}
	return body
}

// SandboxNotes returns the sandbox marker lines of report sb: the runner
// failure marker, or the denial marker followed by the escalation hint when
// advertised; nil when there is nothing to say (or sb is nil).
func SandboxNotes(sb *sandbox.Report, escalationAdvertised bool) []string {
	switch {
	case sb == nil:
		return nil
	case sb.RunnerFailed:
		return []string{sandbox.RunnerFailedMarker(sb.Mode)}
	case sb.Denied:
		notes := []string{sandbox.DenialMarker(sb.Mode)}
		if escalationAdvertised {
			notes = append(notes, sandbox.EscalationHint(Subject))
		}
		return notes
	}
	return nil
}

// --8<-- [start:markers]
// Result renders a finished foreground call exactly as the model sees it.
func Result(r Foreground, escalationAdvertised bool) string {
	body := Body(StreamText(r.Stdout), StreamText(r.Stderr))
	if body == "" {
		body = "(no output)"
	}
	markers := SandboxNotes(r.Sandbox, escalationAdvertised)
	if r.TimedOut {
		markers = append(markers, TimedOutMarker(r.TimeoutMs))
	}
	if r.Stopped != "" {
		markers = append(markers, "[stopped: "+r.Stopped+"]")
	}
	if r.Signaled {
		markers = append(markers, "[killed by signal: "+r.Signal+"]")
	} else if r.ExitCode != 0 {
		markers = append(markers, "[exit code: "+strconv.Itoa(r.ExitCode)+"]")
	}
	if len(markers) == 0 {
		return body
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + strings.Join(markers, "\n")
}

// --8<-- [end:markers]

// TimedOutMarker is "[timed out after <ms>ms]", ms printed as JavaScript
// prints a number (0.5, 1e-9).
func TimedOutMarker(ms float64) string {
	return "[timed out after " + jsjson.FormatNumber(ms) + "ms]"
}
