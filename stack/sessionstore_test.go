package stack_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
)

// TestSessionStoreStaysInTheWorkspace: a stack composed with a session store
// holding the sessions of two workspaces reads, through session_event_read
// and session_event_search, a stored session of its own workspace, and
// refuses the other workspace's; without a store it reads only its own.
func TestSessionStoreStaysInTheWorkspace(t *testing.T) {
	store := t.TempDir()
	s, ws, _ := composed(t, stack.Config{Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever, ExtraTools: stack.ExtraTools{SessionQuery: &stack.SessionQueryConfig{Store: store}}})
	const mine, theirs = "5e551011-0000-4000-8000-00000000000a", "5e551011-0000-4000-8000-00000000000b"
	for _, st := range []struct{ id, cwd, text string }{
		{mine, ws, "an earlier session of this workspace"},
		{theirs, "/srv/another-workspace", "a session of another workspace"},
	} {
		l, err := session.Create(filepath.Join(store, st.id+".jsonl"), session.Header{ID: st.id, Cwd: st.cwd})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append("user/message", map[string]any{"content": []map[string]string{{"type": "text", "text": st.text}}, "role": "user"}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	exec := func(s *stack.Stack, tool string, args map[string]any) string {
		raw, _ := json.Marshal(args)
		return s.Execute(context.Background(), "c1", tool, raw).Text()
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"session_event_read", map[string]any{"seq": 0, "session_id": mine}, "an earlier session of this workspace"},
		{"session_event_search", map[string]any{"query": "session", "session_id": mine}, "an earlier session of this workspace"},
		{"session_event_read", map[string]any{"seq": 0, "session_id": theirs}, "Error: session target is outside the caller workspace"},
		{"session_event_search", map[string]any{"query": "session", "session_id": theirs}, "Error: session target is outside the caller workspace"},
	} {
		if got := exec(s, tc.tool, tc.args); !strings.Contains(got, tc.want) || strings.Contains(got, "another workspace") {
			t.Errorf("%s %v:\n%s\nwant %q", tc.tool, tc.args, got, tc.want)
		}
	}
	without := newComposed(t, stack.Config{ExtraTools: stack.ExtraTools{SessionQuery: &stack.SessionQueryConfig{}}})
	if got := exec(without, "session_event_read", map[string]any{"seq": 0, "session_id": mine}); got != "Error: session target is outside the caller workspace" {
		t.Errorf("without a store: %q", got)
	}
}
