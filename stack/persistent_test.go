package stack_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/stack"
)

// TestThePersistentToolsComposition: the persistent bash takes the
// one-shot bash's place (New refuses both), str_replace_editor is composed
// only when asked for, and under a confined mode the shell runs confined
// by the stack's sandbox and the editor is fenced by it: a write outside
// the workspace fails on the host for both.
func TestThePersistentToolsComposition(t *testing.T) {
	ws := t.TempDir()
	if _, err := stack.New(stack.Config{Workspace: ws, Log: sessiontest.New(t, "s", ws), Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever,
		ExtraTools: stack.ExtraTools{ShellTools: stack.ShellTools{PersistentShell: &stack.PersistentShellConfig{}}},
	}); err == nil || !strings.Contains(err.Error(), "Without.Bash") {
		t.Errorf("a persistent shell beside the one-shot bash: %v", err)
	}
	minimal := stack.Config{ExtraTools: stack.ExtraTools{ShellTools: stack.ShellTools{PersistentShell: &stack.PersistentShellConfig{}, Editor: &stack.EditorConfig{}}},
		Without: stack.Without{Bash: true, JobTools: true, FileTools: true, Policy: true},
	}
	if got := strings.Join(newComposed(t, minimal).Tools(), ","); got != "bash,str_replace_editor" {
		t.Errorf("minimal composition: %s", got)
	}
	if got := strings.Join(newComposed(t, stack.Config{}).Tools(), ","); strings.Contains(got, "str_replace_editor") {
		t.Errorf("the default composition has the editor: %s", got)
	}

	outside := filepath.Join(sandboxtest.TempDir(t, "dshsim-persistent-outside-"), "outside") // neither /tmp nor the temp directory, which workspace-write may write
	s, ws2, _ := newStackConfig(t, stack.Config{Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalNever,
		ExtraTools: stack.ExtraTools{ShellTools: stack.ShellTools{PersistentShell: &stack.PersistentShellConfig{}, Editor: &stack.EditorConfig{}}}, Without: stack.Without{Bash: true},
	})
	exec := func(id, name string, args map[string]any) string {
		raw, _ := json.Marshal(args)
		r := s.Execute(context.Background(), id, name, raw)
		var b strings.Builder
		for _, c := range r.Content {
			b.WriteString(c.Text)
		}
		return b.String()
	}
	if got := exec("c1", "bash", map[string]any{"command": "cd " + ws2 + " && echo in > inside && cat inside"}); got != "in" {
		t.Errorf("shell inside the workspace: %q", got)
	}
	if got := exec("c2", "bash", map[string]any{"command": "echo x > " + outside}); !strings.HasSuffix(got, "[exit code: 1]") {
		t.Errorf("shell outside the workspace: %q", got)
	}
	if got := exec("c3", "str_replace_editor", map[string]any{"command": "create", "path": outside, "file_text": "x"}); got != "Error: "+sandbox.DenialMarker(sandbox.WorkspaceWrite) {
		t.Errorf("editor outside the workspace: %q", got)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a write reached outside the workspace")
	}
	if got := exec("c4", "bash", map[string]any{"command": "true"}); got != "" {
		t.Errorf("the shell answered %q to true", got)
	}
	// a user's /permission switch while the shell is open: upstream's fence
	// refuses the mode change, the shell keeps its directory and its mode
	if _, err := s.SwitchPreset("read-only"); err == nil || !strings.Contains(err.Error(), `cannot change sandbox mode from "workspace-write" to "read-only" while persistent terminal sessions are open`) {
		t.Errorf("a mode switch with the shell open: %v", err)
	}
	if got := exec("c5", "bash", map[string]any{"command": "echo again >> inside && cat inside"}); got != "in\nagain" {
		t.Errorf("the shell after the refused switch: %q", got)
	}
}

// TestAnUnobservedEditor: the editor mounted unobserved (upstream's
// minimal overlay: the bare provider, no fs-observation-policy) edits a
// file the shell wrote and the session never viewed, at the version its
// own stat reads; the observed editor refuses that edit until the file
// is read.
func TestAnUnobservedEditor(t *testing.T) {
	for _, c := range []struct {
		unobserved bool
		want       string
	}{
		{true, "The file <ws>/note.txt has been edited successfully."},
		{false, `Error: edit requires reading "<ws>/note.txt" first`},
	} {
		cfg := stack.Config{Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever,
			ExtraTools: stack.ExtraTools{ShellTools: stack.ShellTools{PersistentShell: &stack.PersistentShellConfig{}, Editor: &stack.EditorConfig{Unobserved: c.unobserved}}},
			Without:    stack.Without{Bash: true, JobTools: true, FileTools: true, Policy: true},
		}
		s, ws, _ := newStackConfig(t, cfg)
		exec := func(id, name string, args map[string]any) string {
			raw, _ := json.Marshal(args)
			var b strings.Builder
			for _, blk := range s.Execute(context.Background(), id, name, raw).Content {
				b.WriteString(blk.Text)
			}
			return strings.ReplaceAll(b.String(), ws, "<ws>")
		}
		if got := exec("c1", "bash", map[string]any{"command": "printf 'a\\n\\told\\n' > " + ws + "/note.txt"}); got != "" {
			t.Fatalf("the shell's write: %q", got)
		}
		got := exec("c2", "str_replace_editor", map[string]any{"command": "str_replace", "path": ws + "/note.txt", "old_str": "\told", "new_str": "\tnew"})
		if got != c.want {
			t.Errorf("unobserved %v: %q, want %q", c.unobserved, got, c.want)
		}
	}
}
