package stack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/stack"
)

// hookStack composes a stack whose launch cwd (the workspace) holds files.
func hookStack(t *testing.T, ws string, mode sandbox.Mode, files map[string]string, hooksDir bool, strict bool) (*stack.Stack, *session.Log) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := sessiontest.New(t, "0b7c2a52-5a8e-4d8e-9a55-000000000002", ws)
	cfg := stack.Config{Workspace: ws, Log: log, Mode: mode, Approval: stack.ApprovalNever, Hooks: stack.HooksConfig{Strict: strict}}
	if hooksDir {
		cfg.Hooks.Dir = ws
	}
	s, err := stack.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sessiontest.StartTurn(t, log)
	return s, log
}

const denyBash = `{"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"echo 'no shell' >&2; exit 2"}]}]}}`

func hookTypes(t *testing.T, log *session.Log) []string {
	t.Helper()
	events, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	return types
}

// The stack mounts both bridges from the launch cwd, Claude Code outside
// Codex, and only when asked to.
func TestStackMountsHooks(t *testing.T) {
	for _, file := range []string{"hooks.json", "codex-hooks.json"} {
		s, log := hookStack(t, t.TempDir(), sandbox.DangerFullAccess, map[string]string{file: denyBash}, true, false)
		r := bash(t, s, "c1", "echo HELLO", nil)
		if !r.IsError || r.Text() != "Error: no shell" {
			t.Errorf("%s: result %q", file, r.Text())
		}
		if got := strings.Join(hookTypes(t, log), ","); got != "turn/start,hook/invoked,hook/result" {
			t.Errorf("%s: log %s", file, got)
		}
	}
	s, log := hookStack(t, t.TempDir(), sandbox.DangerFullAccess, map[string]string{"hooks.json": denyBash}, false, false)
	if r := bash(t, s, "c1", "echo HELLO", nil); r.IsError {
		t.Errorf("without Hooks.Dir no hook may run: %q", r.Text())
	}
	if got := strings.Join(hookTypes(t, log), ","); got != "turn/start" {
		t.Errorf("log %s", got)
	}
}

func TestStackReportsHookConfigs(t *testing.T) {
	s, _ := hookStack(t, t.TempDir(), sandbox.DangerFullAccess, map[string]string{
		"hooks.json":       `{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"command":"exit 2"}]}]}}`,
		"codex-hooks.json": `{"hooks":{"PreToolUse":[{"hooks":[{"command":"exit 0","async":true}]}]}}`,
	}, true, false)
	reports := strings.Join(s.HookReports(), "\n")
	for _, want := range []string{
		`hooks-claude-code: hook config rejected: `,
		`hooks.json:1:36: hooks.PreToolUse[0].matcher: SyntaxError: invalid claude-code regex matcher "(" on event "PreToolUse"`,
		`hooks-codex: skipping async hook on PreToolUse (only sync command hooks run)`,
	} {
		if !strings.Contains(reports, want) {
			t.Errorf("reports lack %q:\n%s", want, reports)
		}
	}
	if r := bash(t, s, "c1", "echo HELLO", nil); r.IsError {
		t.Errorf("a rejected file runs nothing (upstream fails open): %q", r.Text())
	}
	s, _ = hookStack(t, t.TempDir(), sandbox.DangerFullAccess, map[string]string{"hooks.json": `{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"command":"exit 2"}]}]}}`}, true, true)
	if r := bash(t, s, "c1", "echo HELLO", nil); !r.IsError || !strings.Contains(r.Text(), "strict hooks refuse every tool call") {
		t.Errorf("strict: %q", r.Text())
	}
}

// Hooks run under the deployment's mode rooted at the launch cwd; the
// session's own mode switch does not reach them (upstream sends no policy
// with a hook request).
func TestHooksIgnoreTheSessionMode(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	ws := sandboxtest.TempDir(t, "stack-hooks-")
	write := `{"hooks":{"PreToolUse":[{"hooks":[{"command":"echo hook > hook-wrote.txt"}]}]}}`
	s, log := hookStack(t, ws, sandbox.WorkspaceWrite, map[string]string{"hooks.json": write}, true, false)
	if _, err := log.Append("sandbox/mode", map[string]any{"mode": "read-only"}); err != nil {
		t.Fatal(err)
	}
	r := bash(t, s, "c1", "echo tool > tool-wrote.txt", nil)
	if _, err := os.Stat(filepath.Join(ws, "hook-wrote.txt")); err != nil {
		t.Errorf("the hook runs under the deployment's workspace-write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "tool-wrote.txt")); err == nil {
		t.Errorf("the tool runs under the session's read-only: it wrote (%q)", r.Text())
	}
}
