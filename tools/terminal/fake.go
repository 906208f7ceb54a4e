package terminal

import (
	"fmt"
	"strconv"
	"strings"
)

// Prompt is the fake shell's prompt.
const Prompt = "dsh> "

// FakeShell is the deterministic terminal backend of upstream's pty
// snapshot (type "shell"): no process, a scrollback of lines, a prompt
// "dsh> ". A send echoes the text after the prompt and answers printf and
// echo the way a shell prints them; exit ends the session. Anything else
// answers "<word>: command not found" (ours: the recording shows printf
// only).
type FakeShell struct {
	lines  []string // scrollback; the last line is the current one
	exited *int
}

// NewFakeShell starts a session showing the prompt; the motd is the prompt.
func NewFakeShell() (*FakeShell, string) {
	return &FakeShell{lines: []string{Prompt}}, Prompt
}

// Status is "running" or "exited".
func (f *FakeShell) Status() Status {
	if f.exited != nil {
		return Status{Kind: "exited", ExitCode: f.exited}
	}
	return Status{Kind: "running"}
}

// Send types text (and Enter when submit) and returns the viewport: what
// the terminal shows from the typed text on.
func (f *FakeShell) Send(text string, submit bool) SendResult {
	if f.exited != nil {
		return SendResult{Viewport: "", WaitReason: "exited", Status: f.Status()}
	}
	last := len(f.lines) - 1
	f.lines[last] += text
	if !submit {
		return SendResult{Viewport: text, WaitReason: "stdin_read", Status: f.Status()}
	}
	out, code, exit := evaluate(text)
	view := text + "\n" + out
	f.lines = append(f.lines, splitOutput(out)...)
	if exit {
		f.exited = &code
		return SendResult{Viewport: view, WaitReason: "exited", Status: f.Status()}
	}
	f.lines = append(f.lines, Prompt)
	return SendResult{Viewport: view + Prompt, WaitReason: "stdin_read", Status: f.Status()}
}

// splitOutput is out as scrollback lines (its final newline ends a line).
func splitOutput(out string) []string {
	if out == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// Read returns count lines ending offset lines before the newest one.
func (f *FakeShell) Read(offset, count int) ReadResult {
	total := len(f.lines)
	end := max(0, total-offset)
	start := max(0, end-count)
	return ReadResult{Lines: append([]string(nil), f.lines[start:end]...), Start: start, End: end, Total: total}
}

// Signal delivers sig to the foreground: the fake has none but the
// prompt, so an interrupt prints "^C" and a fresh prompt.
func (f *FakeShell) Signal(sig string) error {
	if f.exited != nil {
		return fmt.Errorf("terminal session has exited")
	}
	if sig == "SIGKILL" {
		return fmt.Errorf("SIGKILL of the shell is rejected; use terminal_close")
	}
	f.lines[len(f.lines)-1] += "^C"
	f.lines = append(f.lines, Prompt)
	return nil
}

// evaluate runs one command line of the fake shell: its output, and
// whether (with which code) it exits.
func evaluate(line string) (out string, code int, exit bool) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return "", 0, false
	}
	switch fields[0] {
	case "printf":
		return printf(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "printf"))), 0, false
	case "echo":
		return strings.Join(fields[1:], " ") + "\n", 0, false
	case "exit":
		if len(fields) > 1 {
			if n, err := strconv.Atoi(fields[1]); err == nil {
				code = n
			}
		}
		return "", code, true
	}
	return fields[0] + ": command not found\n", 127, false
}

// printf prints its single-quoted (or bare) format with \n, \t and \\
// escapes, as a shell's printf does for a format without directives.
func printf(arg string) string {
	if len(arg) >= 2 && (arg[0] == '\'' || arg[0] == '"') && arg[len(arg)-1] == arg[0] {
		arg = arg[1 : len(arg)-1]
	}
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(arg)
}
