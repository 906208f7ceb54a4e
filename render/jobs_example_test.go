package render_test

import (
	"fmt"

	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
)

func ExamplePromoted() {
	fmt.Println(render.Promoted(render.Stream{Text: "step 1"}, render.Stream{}, 2000, "bash-1"))
	// Output:
	// step 1
	// [still running after 2000ms; moved to background job bash-1]
	// The command keeps running in the background. You will be notified when it finishes; read newer output with job_output, stop it with job_kill.
}

func ExampleCompletionNotice() {
	o := render.Outcome{Killed: true}
	fmt.Println(render.CompletionNotice("bash-1", "bash", "true", o.Status(), render.JobDetail(o, nil, false)))
	o = render.Outcome{ExitCode: 1}
	sb := &sandbox.Report{Mode: sandbox.ReadOnly, Denied: true}
	fmt.Println(render.CompletionNotice("bash-2", "bash", "touch x", o.Status(), render.JobDetail(o, sb, false)))
	// Output:
	// background job bash-1 (bash: true) finished [status: killed, killed before exit]. Read its output with job_output.
	// background job bash-2 (bash: touch x) finished [status: completed, exit code: 1; [sandbox: file access denied under read-only mode]]. Read its output with job_output.
}

func ExampleJobOutput() {
	read := render.JobRead(render.Delta{
		Stderr:  "spawn failed: Error: spawn /missing/landlock-run ENOENT",
		Sandbox: &sandbox.Report{Mode: sandbox.ReadOnly, RunnerFailed: true},
	}, true)
	o := render.Outcome{Killed: true}
	fmt.Println(render.JobOutput(read, o.Status(), render.JobDetail(o, nil, true)))
	fmt.Println(render.JobOutput("", render.StatusCompleted, "exit code: 0"))
	// Output:
	// [stderr]
	// spawn failed: Error: spawn /missing/landlock-run ENOENT
	// [sandbox: the sandbox runner itself failed under read-only mode — the command did not run; this is a sandbox problem, not a command failure]
	// [status: killed, killed before exit]
	// (no new output)
	// [status: completed, exit code: 0]
}
