package projection

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestProjectBoundary: a web log is compared at its tool boundary: the
// calls, results, approvals and policy events are kept in order; the
// prompt, the context message, the title and the turn end are left out,
// counted with their reason.
func TestProjectBoundary(t *testing.T) {
	ev := func(seq int64, typ, data string) recording.Event {
		return recording.Event{Seq: seq, Type: typ, Data: json.RawMessage(data)}
	}
	result := `{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"ok"}],"isError":false}]}}`
	events := []recording.Event{
		ev(0, "sandbox/mode", `{"mode":"read-only"}`),
		ev(1, "approval/policy", `{"policy":"ask"}`),
		ev(2, "turn/start", `{"turn":1}`),
		ev(3, "user/message", `{"content":[{"type":"text","text":"go"}],"source":{"kind":"user"}}`),
		ev(4, "session/title", `{"title":"go","messageSeqs":[3],"source":{"kind":"fallback"}}`),
		ev(5, "user/message", `{"content":[{"type":"text","text":"Current runtime context."}],"source":{"kind":"plugin","plugin":"p"}}`),
		ev(6, "tool/call", `{"turn":1,"step":1,"callId":"c","name":"write","arguments":"{}"}`),
		ev(7, "approval/asked", `{"id":"a","toolName":"write","callId":"c","reason":"r"}`),
		ev(8, "approval/decided", `{"id":"a","outcome":"allowed-once"}`),
		ev(9, "tool/result", result),
		ev(10, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`),
	}
	all, _, err := ProjectCovered(events, WithCwd("/ws", "s"))
	if err != nil {
		t.Fatal(err)
	}
	items, cov, err := ProjectBoundary(events, WithCwd("/ws", "s"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, it := range items {
		kinds = append(kinds, it.Kind)
	}
	if want := []string{KindSandboxMode, KindApprovalPolicy, KindCall, KindAsked, KindDecided, KindResult}; !slices.Equal(kinds, want) || len(all) <= len(items) {
		t.Fatalf("kinds %q (of %d projected), want %q", kinds, len(all), want)
	}
	wantCompared := map[string]int{"sandbox/mode": 1, "approval/policy": 1, "tool/call": 1, "approval/asked": 1, "approval/decided": 1, "tool/result": 1}
	if !maps.Equal(cov.Compared, wantCompared) {
		t.Fatalf("compared %v, want %v", cov.Compared, wantCompared)
	}
	for typ, n := range map[string]int{"user/message": 2, "session/title": 1, "turn/end": 1} {
		if cov.Left[typ] != n || cov.Why[typ] != whyBoundary {
			t.Errorf("left %s: %d (%q), want %d outside the tool boundary", typ, cov.Left[typ], cov.Why[typ], n)
		}
	}
}
