package delegation_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
)

func TestChildDepth(t *testing.T) {
	ptr := func(i int) *int { return &i }
	tests := []struct {
		parent int
		max    *int
		want   int
		err    string
	}{
		{0, nil, 1, ""},
		{3, nil, 4, ""},
		{0, ptr(1), 1, ""},
		{1, ptr(1), 0, "subagent depth 2 exceeds maxDepth 1"},
		{0, ptr(0), 0, "subagent depth 1 exceeds maxDepth 0"},
		{0, ptr(-1), 0, "subagent maxDepth must be a non-negative safe integer"},
		{0, ptr(1 << 53), 0, "subagent maxDepth must be a non-negative safe integer"},
		{0, ptr(1<<53 - 1), 1, ""},
	}
	for _, tc := range tests {
		got, err := delegation.ChildDepth(tc.parent, tc.max)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != tc.want || msg != tc.err {
			t.Errorf("ChildDepth(%d, %v) = %d, %q; want %d, %q", tc.parent, tc.max, got, msg, tc.want, tc.err)
		}
	}
}

func TestCaptureFrom(t *testing.T) {
	ev := func(typ, data string) session.Event {
		return session.Event{Type: typ, Seq: 7, Data: json.RawMessage(data)}
	}
	tests := []struct {
		name     string
		events   []session.Event
		approval bool
		want     delegation.Capture
		err      string
	}{
		{"nothing to inherit", nil, false, delegation.Capture{}, ""},
		{"the pin follows the approval service, not the parent's policy", []session.Event{ev("approval/policy", `{"policy":"ask"}`)}, true, delegation.Capture{PinNever: true}, ""},
		{"the last override wins", []session.Event{ev("sandbox/mode", `{"mode":"workspace-write"}`), ev("sandbox/mode", `{"mode":"read-only"}`)}, true, delegation.Capture{SandboxMode: sandbox.ReadOnly, PinNever: true}, ""},
		{"a malformed override is an error", []session.Event{ev("sandbox/mode", `{"mode":"full"}`)}, true, delegation.Capture{}, "seq 7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := delegation.CaptureFrom(tc.events, tc.approval)
			if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("CaptureFrom = %+v, %v; want %+v, error containing %q", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestSeed(t *testing.T) {
	tests := []struct {
		c    delegation.Capture
		want string
	}{
		{delegation.Capture{}, ""},
		{delegation.Capture{PinNever: true}, `approval/policy {"policy":"never","source":"delegation"}`},
		{delegation.Capture{SandboxMode: sandbox.ReadOnly, PinNever: true}, `sandbox/mode {"mode":"read-only","source":"delegation"}` + "\n" + `approval/policy {"policy":"never","source":"delegation"}`},
	}
	for _, tc := range tests {
		evs, err := delegation.Seed(sessiontest.New(t, "c", ""), tc.c)
		var got []string
		for _, e := range evs {
			got = append(got, e.Type+" "+string(e.Data))
		}
		if err != nil || strings.Join(got, "\n") != tc.want {
			t.Errorf("Seed(%+v) = %q, %v; want %q", tc.c, strings.Join(got, "\n"), err, tc.want)
		}
	}
}

// TestNarrow: a child may run in its parent's standing mode or a narrower
// one, never a wider one, and never in a mode either side does not know.
// Planted bug caught: a comparison that lets workspace-write widen to
// danger-full-access, or an unknown parent mode that admits anything.
func TestNarrow(t *testing.T) {
	inherited := delegation.Capture{SandboxMode: sandbox.WorkspaceWrite, PinNever: true}
	for _, tc := range []struct {
		parent, want sandbox.Mode
		got          sandbox.Mode // "" with ok false: refused
		ok           bool
	}{
		{sandbox.WorkspaceWrite, "", sandbox.WorkspaceWrite, true},
		{sandbox.WorkspaceWrite, sandbox.ReadOnly, sandbox.ReadOnly, true},
		{sandbox.WorkspaceWrite, sandbox.WorkspaceWrite, sandbox.WorkspaceWrite, true},
		{sandbox.DangerFullAccess, sandbox.WorkspaceWrite, sandbox.WorkspaceWrite, true},
		{sandbox.WorkspaceWrite, sandbox.DangerFullAccess, "", false},
		{sandbox.ReadOnly, sandbox.WorkspaceWrite, "", false},
		{"weird", sandbox.ReadOnly, "", false},
		{sandbox.WorkspaceWrite, "weird", "", false},
	} {
		c, err := delegation.Narrow(inherited, tc.parent, tc.want)
		if (err == nil) != tc.ok || c.SandboxMode != tc.got || (tc.ok && !c.PinNever) {
			t.Errorf("Narrow(%s → %q) = %+v, %v", tc.parent, tc.want, c, err)
		}
	}
	if _, err := delegation.Narrow(inherited, sandbox.ReadOnly, sandbox.DangerFullAccess); err == nil ||
		err.Error() != `a delegated child can only narrow its parent's sandbox: "danger-full-access" is not within the parent's "read-only" mode` {
		t.Errorf("the refusal: %v", err)
	}
}
