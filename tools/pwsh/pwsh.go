package pwsh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the tool's name (one-shot and persistent alike).
const Name = "pwsh"

// Descriptions (VERBATIM, as the pwsh recordings pin them).
const (
	Description           = "Execute a PowerShell command (`pwsh -Command`) and return its stdout/stderr. Each call runs in a fresh pwsh process: no state (cwd, variables, functions) persists between calls — pass `workdir` instead of using `cd`. Paths use native Windows form (`C:\\...`); read environment variables with `$env:NAME`. Non-zero exits are reported as `[exit code: N]`. Current harness environment facts are exposed through managed `$env:DSH_*` variables; inspect them when needed. Long output is truncated to its tail; the full output is saved to a file whose path is reported when available. On Windows a force-killed command settles as `[exit code: 1]` without a signal marker — treat it as an interruption, not a command failure. Set `run_in_background: true` for long-running commands: the call returns a job id immediately; read its output with `job_output` and stop it with `job_kill`."
	PersistentDescription = "Run commands in a persistent PowerShell shell. State, including the current directory and exported environment variables, persists across calls for this agent."
	// PromptSection is the one-shot tool's section (VERBATIM).
	PromptSection = "Non-zero exits are reported as `[exit code: N]` markers; investigate failures before moving on. On Windows a killed process settles as `[exit code: 1]` without a signal marker; treat a bare exit 1 after an interruption as a termination, not a command failure."
)

const (
	parameters           = `{"type":"object","properties":{"command":{"type":"string","description":"The PowerShell command to execute."},"description":{"type":"string","description":"Clear, concise description of what this command does in active voice, 5-10 words (shown in the UI). Examples: \"ls\" → \"List files in current directory\"; \"git status\" → \"Show working tree status\"; \"Get-Process\" → \"List running processes\"."},"timeoutMs":{"type":"number","description":"Timeout in milliseconds. The executor applies its configured default and cap, and kills the command on expiry."},"workdir":{"type":"string","description":"Working directory for this command. Defaults to the session workspace; a relative path is resolved against it."},"run_in_background":{"type":"boolean","description":"Run in the background and return a job id immediately (collect with job_output, stop with job_kill). No timeout applies."}},"required":["command","description"]}`
	persistentParameters = `{"type":"object","properties":{"command":{"type":"string","description":"The PowerShell command to run. Relative path is preferred in the command."}},"required":["command"]}`
)

// Config configures the tool.
type Config struct {
	// Persistent gives the persistent shell's schema (one command only).
	Persistent bool
	// Program is the PowerShell program (default "pwsh" on PATH).
	Program string
	// TimeoutMs is the default timeout (default 60000; persistent 30000).
	TimeoutMs int64
	// Workspace is the default working directory of an agentless call.
	Workspace string
}

// Available reports whether program (default "pwsh") runs here: upstream's
// probe, pwsh -NoLogo -NoProfile -NonInteractive -Command $true.
func Available(program string) bool {
	if program == "" {
		program = "pwsh"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, program, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", "$true").Run() == nil
}

// New returns pwsh's registration with its real body: each call runs
// pwsh -NoLogo -NoProfile -NonInteractive -Command <command> unconfined
// (as upstream's dsh-pwsh-local runs it) and renders as bash's results do.
// The one-shot tool brings the tool:pwsh prompt section (order 105); the
// persistent shell none. Where the program does not run ([Available]) the
// tool is unhosted: a composition that serves from a recording serves it.
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.Program == "" {
		cfg.Program = "pwsh"
	}
	if cfg.TimeoutMs == 0 {
		cfg.TimeoutMs = 60000
		if cfg.Persistent {
			cfg.TimeoutMs = 30000
		}
	}
	t := toolreg.Tool{Def: pipeline.Tool{Name: Name, Description: Description, Parameters: json.RawMessage(parameters), Run: cfg.run},
		Section: &toolreg.Section{Name: "tool:" + Name, Order: 105, Text: PromptSection}, Unhosted: !Available(cfg.Program)}
	if cfg.Persistent {
		t.Def.Description, t.Def.Parameters, t.Section = PersistentDescription, json.RawMessage(persistentParameters), nil
	}
	return []toolreg.Tool{t}, nil
}

func (cfg Config) run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		Command    string   `json:"command"`
		TimeoutMs  *float64 `json:"timeoutMs"`
		Workdir    *string  `json:"workdir"`
		Background bool     `json:"run_in_background"`
	}
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, errors.New(`"arguments" must be an object`)
	}
	if strings.TrimSpace(a.Command) == "" {
		return pipeline.Output{}, errors.New("invalid command: expected a non-empty string")
	}
	if a.Background {
		return pipeline.Output{}, errors.New("run_in_background is not available for pwsh in this composition")
	}
	timeout := cfg.TimeoutMs
	if a.TimeoutMs != nil {
		if !(*a.TimeoutMs > 0) {
			return pipeline.Output{}, fmt.Errorf("invalid timeoutMs: expected a positive number, got %v", *a.TimeoutMs)
		}
		timeout = min(int64(*a.TimeoutMs), 600000)
	}
	dir := cfg.Workspace
	if ag := call.Agent(); ag != nil && ag.Session != nil {
		dir = ag.Session.Header().Cwd
	}
	if a.Workdir != nil {
		if filepath.IsAbs(*a.Workdir) {
			dir = *a.Workdir
		} else {
			dir = filepath.Join(dir, *a.Workdir)
		}
	}
	return runPwsh(ctx, cfg.Program, a.Command, dir, timeout)
}

func runPwsh(ctx context.Context, program, command, dir string, timeoutMs int64) (pipeline.Output, error) {
	cmd := exec.Command(program, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return pipeline.Output{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	fg := render.Foreground{TimeoutMs: float64(timeoutMs)}
	select {
	case <-done:
	case <-time.After(time.Duration(timeoutMs) * time.Millisecond):
		fg.TimedOut = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		<-done
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return pipeline.Output{}, pipeline.ErrAborted
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		fg.Signaled, fg.Signal = true, signalName(ws.Signal())
	} else {
		fg.ExitCode = cmd.ProcessState.ExitCode()
	}
	fg.Stdout, fg.Stderr = render.Stream{Text: stdout.String()}, render.Stream{Text: stderr.String()}
	return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(render.Result(fg, false))}}, nil
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return fmt.Sprintf("SIG%d", int(s))
}
