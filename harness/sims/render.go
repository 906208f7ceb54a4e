package sims

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/render"
)

// renderCase is one constructed execution result.
type renderCase struct {
	title string
	fg    render.Foreground
	// promoted: the timeout expired while the command kept running
	promoted bool
	command  string
	jobID    string
	later    render.Outcome // how the promoted job settles later
}

// renderSpillPath is the constructed full-output path of the render sim,
// in upstream's shape (sandbox/outfile).
const renderSpillPath = "/tmp/dsh-subprocess-Ab12Cd/dsh-subprocess-4242-3-0a1b2c3d4e5f-stdout.log"

// The render sim: the bash tool's renderer on constructed execution results.
func runRender(env *harness.Env) (map[string][]byte, error) {
	cases := []renderCase{
		{title: "success", fg: render.Foreground{Stdout: render.Stream{Text: "ok  example.com/app  0.412s\n"}}},
		{title: "non-zero exit: a marker in the text; the bash tool returns it as a normal result, not a tool error", fg: render.Foreground{ExitCode: 1, Stdout: render.Stream{Text: "--- FAIL: TestParse (0.00s)\n    parse_test.go:14: got 3, want 4\nFAIL"}}},
		{title: "stderr only", fg: render.Foreground{Stderr: render.Stream{Text: "warning: --fast is deprecated, use --jobs\n"}}},
		{title: "no output", fg: render.Foreground{}},
		{title: "truncated stream: the tail, and where the full output is", fg: render.Foreground{Stdout: render.Stream{Text: "line 4998\nline 4999\nline 5000\n", Truncated: true, FullPath: renderSpillPath}}},
		{title: "timeout promoted to a background job (not killed)", promoted: true, command: "make release", jobID: "bash-1",
			fg:    render.Foreground{TimeoutMs: 60000, Stdout: render.Stream{Text: "compiling 214 packages...\n"}},
			later: render.Outcome{ExitCode: 0}},
		{title: "killed by signal", fg: render.Foreground{Signaled: true, Signal: "SIGKILL", Stdout: render.Stream{Text: "allocating buffers"}}},
	}
	var b bytes.Buffer
	b.WriteString("render: the text the model gets for a bash execution result\n")
	b.WriteString("real: package render (render.Result, render.Promoted, render.CompletionNotice), the bash tool's renderer\n")
	b.WriteString("constructed: every execution result below (no process runs here; tools/bash's tests run the same renderer on real processes)\n")
	for i, c := range cases {
		fmt.Fprintf(&b, "\n%d. %s\n", i+1, c.title)
		fmt.Fprintf(&b, "   result: %s\n", describe(c))
		text := render.Result(c.fg, false)
		if c.promoted {
			text = render.Promoted(c.fg.Stdout, c.fg.Stderr, c.fg.TimeoutMs, c.jobID)
		}
		b.WriteString("   the model gets:\n")
		for _, line := range strings.Split(text, "\n") {
			b.WriteString("   | " + line + "\n")
		}
		if c.promoted {
			detail := render.JobDetail(c.later, nil, false)
			b.WriteString("   later, when the command finishes, the owner is sent:\n")
			b.WriteString("   | " + render.CompletionNotice(c.jobID, "bash", c.command, c.later.Status(), detail) + "\n")
		}
	}
	return map[string][]byte{"txt/render.txt": b.Bytes()}, nil
}

// describe prints the facts of a constructed result in one line.
func describe(c renderCase) string {
	f := c.fg
	var parts []string
	if c.promoted {
		parts = append(parts, "command "+strconv.Quote(c.command), fmt.Sprintf("still running after timeoutMs %v", f.TimeoutMs))
	} else if f.Signaled {
		parts = append(parts, "signal "+f.Signal)
	} else {
		parts = append(parts, fmt.Sprintf("exit code %d", f.ExitCode))
	}
	for _, s := range []struct {
		name string
		st   render.Stream
	}{{"stdout", f.Stdout}, {"stderr", f.Stderr}} {
		if s.st.Text == "" {
			continue
		}
		d := s.name + " " + strconv.Quote(s.st.Text)
		if s.st.Truncated {
			d += " (tail only; full output in the constructed path " + s.st.FullPath + ")"
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, ", ")
}
