package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
)

// TestFormatsGolden renders every result format of the package into one
// golden file (testdata/formats.golden; DSHSIM_UPDATE=1 rewrites it).
func TestFormatsGolden(t *testing.T) {
	denied := &sandbox.Report{Mode: sandbox.WorkspaceWrite, Denied: true, Enforcement: sandbox.Full}
	runner := &sandbox.Report{Mode: sandbox.ReadOnly, RunnerFailed: true}
	cases := []struct {
		name string
		text string
	}{
		{"foreground: stdout", render.Result(render.Foreground{Stdout: render.Stream{Text: "hello\n"}}, false)},
		{"foreground: no output", render.Result(render.Foreground{}, false)},
		{"foreground: stdout and stderr", render.Result(render.Foreground{Stdout: render.Stream{Text: "out"}, Stderr: render.Stream{Text: "err\n"}}, false)},
		{"foreground: exit code", render.Result(render.Foreground{ExitCode: 3, Stdout: render.Stream{Text: "failing"}}, false)},
		{"foreground: signal", render.Result(render.Foreground{Signaled: true, Signal: "SIGKILL"}, false)},
		{"foreground: timeout and signal", render.Result(render.Foreground{TimedOut: true, TimeoutMs: 100, Signaled: true, Signal: "SIGTERM"}, false)},
		{"foreground: stopped", render.Result(render.Foreground{Stopped: "job_kill", Signaled: true, Signal: "SIGTERM"}, false)},
		{"foreground: truncated with path", render.Result(render.Foreground{Stdout: render.Stream{Text: "tail", Truncated: true, FullPath: "/tmp/full.log"}}, false)},
		{"foreground: truncated without path", render.Result(render.Foreground{Stdout: render.Stream{Text: "tail", Truncated: true}}, false)},
		{"foreground: denial, escalation advertised", render.Result(render.Foreground{ExitCode: 1, Stderr: render.Stream{Text: "touch: cannot touch '/etc/x': Read-only file system\n"}, Sandbox: denied}, true)},
		{"foreground: denial, not advertised", render.Result(render.Foreground{ExitCode: 1, Sandbox: denied}, false)},
		{"promoted", render.Promoted(render.Stream{Text: "partial"}, render.Stream{}, 60000, "bash-2")},
		{"background ack", render.Started("bash-1")},
		{"job_kill", render.KillRequested("bash-1")},
		{"job_output: running", render.JobOutput(render.JobRead(render.Delta{Stdout: "step 1\n"}, false), render.StatusRunning, "")},
		{"job_output: nothing new", render.JobOutput("", render.StatusCompleted, render.JobDetail(render.Outcome{}, nil, false))},
		{"job_output: lossy", render.JobOutput(render.JobRead(render.Delta{Stdout: "tail", Lossy: true, FullOutputPaths: []string{"/tmp/o.log"}}, false), render.StatusKilled, render.JobDetail(render.Outcome{Killed: true, Signal: "SIGTERM"}, nil, false))},
		{"job_output: runner failure", render.JobOutput(render.JobRead(render.Delta{Stderr: "spawn failed: Error: spawn /x ENOENT", Sandbox: runner}, true), render.StatusKilled, render.JobDetail(render.Outcome{Killed: true}, runner, true))},
		{"job_output: denial in the detail", render.JobOutput("", render.StatusCompleted, render.JobDetail(render.Outcome{ExitCode: 1}, denied, true))},
		{"completion notice", render.CompletionNotice("bash-1", "bash", "sleep 1; echo done", render.StatusCompleted, "exit code: 0")},
	}
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "== %s\n%s\n", c.name, c.text)
	}
	harness.Golden(t, "testdata", "formats.golden", []byte(b.String()))
}
