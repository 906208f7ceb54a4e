package render

import (
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/sandbox"
)

// Job statuses as the model sees them.
const (
	// StatusRunning is a job that has not settled yet.
	StatusRunning = "running"
	// StatusCompleted is a job whose process exited (with any exit code).
	StatusCompleted = "completed"
	// StatusKilled is a job whose process died from a signal, was killed
	// before it exited, or never ran.
	StatusKilled = "killed"
)

// Outcome is how a background job settled.
type Outcome struct {
	// Killed reports that the process did not exit normally.
	Killed bool
	// Signal is the signal name when Killed by a signal; "" when it was killed
	// before it ever exited (for example a runner that failed to start).
	Signal string
	// ExitCode is the exit code when not Killed.
	ExitCode int
}

// Status returns "killed" or "completed".
func (o Outcome) Status() string {
	if o.Killed {
		return StatusKilled
	}
	return StatusCompleted
}

// Detail returns "signal: <SIG>", "killed before exit" or "exit code: <n>".
func (o Outcome) Detail() string {
	switch {
	case o.Killed && o.Signal != "":
		return "signal: " + o.Signal
	case o.Killed:
		return "killed before exit"
	}
	return "exit code: " + strconv.Itoa(o.ExitCode)
}

// JobDetail is the terminal detail of a settled job: the outcome detail and,
// for an exited process with sandbox notes, "exit code: <n>; <notes joined by
// a space>". Notes of a killed job are not folded into the detail; they stay
// in the output read (see [JobRead]).
func JobDetail(o Outcome, sb *sandbox.Report, escalationAdvertised bool) string {
	d := o.Detail()
	if o.Killed {
		return d
	}
	if notes := SandboxNotes(sb, escalationAdvertised); len(notes) > 0 {
		d += "; " + strings.Join(notes, " ")
	}
	return d
}

// StatusLine renders "[status: <status>, <detail>]", or "[status: <status>]"
// when detail is empty (a running job has no detail).
func StatusLine(status, detail string) string {
	if detail == "" {
		return "[status: " + status + "]"
	}
	return "[status: " + status + ", " + detail + "]"
}

// Delta is one incremental read of a job's output.
type Delta struct {
	// Stdout and Stderr are the bytes produced since the previous read.
	Stdout, Stderr string
	// Lossy reports that some output was dropped from memory.
	Lossy bool
	// FullOutputPaths are the files holding the complete streams, if any.
	FullOutputPaths []string
	// Sandbox, when non-nil, adds the runner-failure or denial notes.
	Sandbox *sandbox.Report
}

// LossNotice is "[some output was dropped from memory; full output: <paths or
// (unavailable)>]".
func LossNotice(paths []string) string {
	p := strings.Join(paths, ", ")
	if p == "" {
		p = "(unavailable)"
	}
	return "[some output was dropped from memory; full output: " + p + "]"
}

// JobRead renders an incremental read: the delta (stdout, then the [stderr]
// section), then the notices (loss notice, then the runner-failure marker or
// the denial marker with the hint when advertised) joined by "\n"; a newline
// separates notices from a delta that does not end with one. It returns ""
// when there is nothing new.
func JobRead(d Delta, escalationAdvertised bool) string {
	out := Body(d.Stdout, d.Stderr)
	var notices []string
	if d.Lossy {
		notices = append(notices, LossNotice(d.FullOutputPaths))
	}
	notices = append(notices, SandboxNotes(d.Sandbox, escalationAdvertised)...)
	if len(notices) == 0 {
		return out
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + strings.Join(notices, "\n")
}

// JobOutput renders a job_output result: the read, or "(no new output)", then
// the status line on its own line.
func JobOutput(read, status, detail string) string {
	if read == "" {
		read = "(no new output)"
	}
	if !strings.HasSuffix(read, "\n") {
		read += "\n"
	}
	return read + StatusLine(status, detail)
}

// Started is the background acknowledgement "started background job <id>".
func Started(jobID string) string { return "started background job " + jobID }

// KillRequested is the job_kill result "requested cancellation of job <id>".
func KillRequested(jobID string) string { return "requested cancellation of job " + jobID }

// CompletionNotice is the message sent when a background job settles:
// "background job <id> (<kind>: <label>) finished [status: <status>, <detail>]. Read its output with job_output."
func CompletionNotice(jobID, kind, label, status, detail string) string {
	return "background job " + jobID + " (" + kind + ": " + label + ") finished " + StatusLine(status, detail) + ". Read its output with job_output."
}

// Promoted renders a foreground call whose timeout expired while the command
// kept running: the output so far (newline-terminated when non-empty), then
// "[still running after <ms>ms; moved to background job <id>]" and the
// sentence telling the model it will be notified.
func Promoted(stdout, stderr Stream, timeoutMs float64, jobID string) string {
	out := Body(StreamText(stdout), StreamText(stderr))
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + "[still running after " + jsjson.FormatNumber(timeoutMs) + "ms; moved to background job " + jobID + "]\n" +
		"The command keeps running in the background. You will be notified when it finishes; read newer output with job_output, stop it with job_kill."
}
