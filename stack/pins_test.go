package stack_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
)

// TestRecursiveDeleteNeedsNoConfirmation pins upstream's #149 in the
// stack: under workspace-write a bash call that deletes the whole
// workspace, .git included, runs without asking anyone (no approval
// prompt; what the delete leaves on each backend is pinned in package
// sandbox/spawn, TestRecursiveDeleteOfTheWorkspace).
func TestRecursiveDeleteNeedsNoConfirmation(t *testing.T) {
	asked := 0
	s, ws, _ := newStack(t, sandbox.WorkspaceWrite, stack.ApprovalAsk, func(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
		asked++
		return pipeline.Rejected, nil
	})
	for _, p := range []string{".git/config", "src/main.go"} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, p), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := bash(t, s, "c1", `rm -rf "$PWD"/.git "$PWD"/src; ls -A`, nil)
	if r.IsError || r.Text() != "(no output)" || asked != 0 {
		t.Errorf("result %q, asked %d times; want the delete to run unasked", r.Text(), asked)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git")); err == nil {
		t.Error(".git survived the delete")
	}
}
