package stack_test

import (
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/stack"
)

// TestYields: which calls let upstream's host observe background jobs, by
// the registrations' rules.
func TestYields(t *testing.T) {
	s := newComposed(t, stack.Config{ExtraTools: stack.ExtraTools{SessionQuery: &stack.SessionQueryConfig{}}})
	tests := []struct {
		name, args string
		want       bool
	}{
		{"job_list", `{}`, false},
		{"job_kill", `{"job_id":"bash-1"}`, false},
		{"job_output", `{"job_id":"bash-1"}`, false},
		{"job_output", `{"job_id":"bash-1","wait":true}`, false}, // the wait yields itself while it blocks
		{"bash", `{"command":"x","run_in_background":true}`, false},
		{"bash", `{"command":"x"}`, true},
		{"bash", `{"command":"x","run_in_background":false}`, true},
		{"bash", `not json`, true},
		{"read", `{"path":"a"}`, true},
		{"write", `{}`, true},
		{"session_event_search", `{}`, true},
		{"no_such_tool", `{}`, true},
	}
	for _, tc := range tests {
		if got := s.Yields(tc.name, json.RawMessage(tc.args)); got != tc.want {
			t.Errorf("Yields(%s, %s) = %v, want %v", tc.name, tc.args, got, tc.want)
		}
	}
}
