package render_test

import (
	"fmt"

	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
)

func ExampleResult() {
	fmt.Printf("%q\n", render.Result(render.Foreground{Stdout: render.Stream{Text: "hello\n"}}, false))
	fmt.Printf("%q\n", render.Result(render.Foreground{}, false))
	fmt.Printf("%q\n", render.Result(render.Foreground{Stdout: render.Stream{Text: "out\n"}, Stderr: render.Stream{Text: "err\n"}}, false))
	fmt.Printf("%q\n", render.Result(render.Foreground{ExitCode: 3, Stdout: render.Stream{Text: "failing"}}, false))
	fmt.Printf("%q\n", render.Result(render.Foreground{TimedOut: true, TimeoutMs: 100, Signaled: true, Signal: "SIGTERM"}, false))
	fmt.Printf("%q\n", render.Result(render.Foreground{Stdout: render.Stream{Text: "tail", Truncated: true}}, false))
	// Output:
	// "hello\n"
	// "(no output)"
	// "out\n[stderr]\nerr\n"
	// "failing\n[exit code: 3]"
	// "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"
	// "tail\n[output truncated; full output: (unavailable)]"
}

func ExampleResult_sandboxDenied() {
	r := render.Foreground{
		ExitCode: 1,
		Stderr:   render.Stream{Text: "bash: /etc/x: Read-only file system\n"},
		Sandbox:  &sandbox.Report{Mode: sandbox.WorkspaceWrite, Denied: true, Enforcement: sandbox.Full},
	}
	fmt.Println(render.Result(r, true))
	fmt.Println("--- not advertised:")
	fmt.Println(render.Result(r, false))
	// Output:
	// [stderr]
	// bash: /etc/x: Read-only file system
	// [sandbox: file access denied under workspace-write mode]
	// [sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]
	// [exit code: 1]
	// --- not advertised:
	// [stderr]
	// bash: /etc/x: Read-only file system
	// [sandbox: file access denied under workspace-write mode]
	// [exit code: 1]
}

func ExampleResult_stopped() {
	r := render.Foreground{Stdout: render.Stream{Text: "partial"}, Stopped: "session closed", Signaled: true, Signal: "SIGTERM"}
	fmt.Println(render.Result(r, false))
	// Output:
	// partial
	// [stopped: session closed]
	// [killed by signal: SIGTERM]
}
