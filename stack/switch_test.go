package stack_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
)

// TestSwitchPresetConfinesTheNextCall: a user's /permission switch writes
// the events that change (none when nothing does), and the next call runs
// under the mode in force: a write in the workspace under read-only fails
// and leaves no file. A composition without the policy plugins refuses it.
func TestSwitchPresetConfinesTheNextCall(t *testing.T) {
	s, ws, _ := newStack(t, sandbox.DangerFullAccess, stack.ApprovalNever, nil)
	evs, err := s.SwitchPreset("read-only")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if want := []string{"permission/preset", "sandbox/mode", "approval/policy"}; !slices.Equal(types, want) {
		t.Fatalf("switch wrote %q, want %q", types, want)
	}
	if again, err := s.SwitchPreset("read-only"); err != nil || len(again) != 0 {
		t.Fatalf("a switch to the preset in force wrote %d events (%v)", len(again), err)
	}
	r := bash(t, s, "c1", "echo x > switched.txt", nil)
	if _, err := os.Stat(filepath.Join(ws, "switched.txt")); !strings.Contains(r.Text(), "[sandbox: file access denied under read-only mode]") || err == nil {
		t.Fatalf("under read-only the write ran: %q (file: %v)", r.Text(), err)
	}
	if evs, err := s.SwitchPreset("danger-full-access"); err != nil || len(evs) != 3 {
		t.Fatalf("switch back: %d events, %v", len(evs), err)
	}
	if r := bash(t, s, "c2", "echo x > switched.txt", nil); r.IsError || strings.Contains(r.Text(), "[sandbox:") {
		t.Fatalf("under danger-full-access the write failed: %q", r.Text())
	}
	if _, err := os.Stat(filepath.Join(ws, "switched.txt")); err != nil {
		t.Fatalf("under danger-full-access: %v", err)
	}
	unguarded := newComposed(t, stack.Config{Without: stack.Without{Policy: true}})
	if _, err := unguarded.SwitchPreset("read-only"); err == nil || !strings.Contains(err.Error(), "no sandbox-policy plugins") {
		t.Fatalf("a composition without policy plugins switched: %v", err)
	}
}
