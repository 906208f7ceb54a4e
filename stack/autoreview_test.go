package stack_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/autoreview"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
)

// TestAutoReviewInTheStack: with Auto review on, a call the (constructed)
// reviewer approves runs with full access: it writes outside the workspace,
// which the workspace-write sandbox denies; a rejected call goes to the user,
// who allows it once, and it runs confined (the kernel denies the same
// write); a delegated child is never reviewed.
func TestAutoReviewInTheStack(t *testing.T) {
	outside, err := os.MkdirTemp("/var/tmp", "dsh-stack-autoreview-")
	if err != nil {
		t.Skipf("needs a writable /var/tmp outside the sandbox's temp areas: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	ws := t.TempDir()
	log := sessiontest.New(t, "s1", ws)
	var reviewed, asked []string
	s, err := stack.New(stack.Config{
		Workspace: ws, Log: log, Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalAsk,
		Answer: func(_ context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
			asked = append(asked, req.ToolName)
			return pipeline.AllowedOnce, nil
		},
		ReviewConfig: stack.ReviewConfig{
			AutoReview: autoreview.Config{Enabled: true, Name: "constructed reviewer", Timeout: 5 * time.Second, Tools: []string{"bash"}},
			Reviewer: autoreview.ReviewerFunc(func(_ context.Context, sub autoreview.Subject) (autoreview.Verdict, error) {
				reviewed = append(reviewed, sub.CallID)
				if strings.Contains(string(sub.Args), "approved") {
					return autoreview.Verdict{Approve: true, Risk: "low", Rationale: "Creates one empty file."}, nil
				}
				return autoreview.Verdict{Risk: "medium", Rationale: "Writes outside the project."}, nil
			}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sessiontest.StartTurn(t, log)
	ok := bash(t, s, "c1", "touch "+filepath.Join(outside, "approved"), nil)
	if ok.IsError {
		t.Fatalf("approved call: %s", ok.Text())
	}
	if _, err := os.Stat(filepath.Join(outside, "approved")); err != nil {
		t.Errorf("the approved call did not run with full access: %v", err)
	}
	no := bash(t, s, "c2", "touch "+filepath.Join(outside, "rejected"), nil)
	if !strings.Contains(no.Text(), sandbox.DenialMarker(sandbox.WorkspaceWrite)) {
		t.Errorf("rejected then user-allowed call: %q, want the sandbox's denial", no.Text())
	}
	if _, err := os.Stat(filepath.Join(outside, "rejected")); err == nil {
		t.Error("the rejected call ran with full access")
	}
	if strings.Join(reviewed, ",") != "c1,c2" || strings.Join(asked, ",") != "bash" {
		t.Errorf("reviewed %v, user asked %v", reviewed, asked)
	}
	child := delegate(t, s, stack.Delegation{})
	if res := call(t, child.Execute, "c3", "bash", map[string]any{"command": "true", "description": "x"}); res.IsError {
		t.Errorf("child call: %s", res.Text())
	}
	if len(reviewed) != 2 {
		t.Errorf("the child's call was reviewed: %v", reviewed)
	}
}

func TestAutoReviewConfig(t *testing.T) {
	log := sessiontest.New(t, "x", "/tmp")
	rev := autoreview.ReviewerFunc(func(context.Context, autoreview.Subject) (autoreview.Verdict, error) {
		return autoreview.Verdict{}, nil
	})
	tests := []struct {
		name string
		cfg  stack.Config
		want string
	}{
		{"never policy", stack.Config{Workspace: "/tmp", Log: log, Mode: sandbox.ReadOnly, Approval: stack.ApprovalNever, ReviewConfig: stack.ReviewConfig{AutoReview: autoreview.Config{Enabled: true, Name: "r"}, Reviewer: rev}},
			"stack: auto review needs approval policy ask (never rejects every ask before any answerer, the reviewer included)"},
		{"no reviewer", stack.Config{Workspace: "/tmp", Log: log, Mode: sandbox.ReadOnly, Approval: stack.ApprovalAsk, Answer: (&granting{}).answer, ReviewConfig: stack.ReviewConfig{AutoReview: autoreview.Config{Enabled: true, Name: "r"}}},
			"stack: autoreview: enabled without a reviewer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := stack.New(tc.cfg); s != nil || err == nil || err.Error() != tc.want {
				t.Fatalf("New = %v, %v; want %q", s, err, tc.want)
			}
		})
	}
}
