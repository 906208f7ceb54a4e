package replay

import (
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

// threeChildren is a recording whose session delegated three children,
// with the tasks "A", "B" and "C" in creation order.
func threeChildren() *recording.Recording {
	rec := &recording.Recording{Header: recording.Header{ID: "recorded-root"}}
	for i, task := range []string{"A", "B", "C"} {
		data, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": task}}, "source": map[string]string{"kind": "user"}})
		rec.Children = append(rec.Children, &recording.Child{Index: i + 1, Header: recording.Header{ID: "recorded-child-" + task, ParentSession: "recorded-root"},
			Events: []recording.Event{{Type: session.KindUserMessage, Seq: 1, Data: data}}})
	}
	return rec
}

// TestRebindTakesOnlyANotStartedSiblings: a child whose task is not its
// reservation's takes the reservation of the sibling whose task it is when
// that sibling has not started (children started concurrently match as a
// set), or a reservation no one holds; a started sibling's binding is
// fixed, so the child keeps its own. Planted bug caught: a rebind taking a
// started sibling's reservation.
func TestRebindTakesOnlyANotStartedSiblings(t *testing.T) {
	for _, tc := range []struct {
		name          string
		firstStarted  bool
		secondTask    string
		first, second int // the recorded children bound after the rebind
		free          int // the recorded child no one holds after it
	}{
		{"the sibling has not started: they swap", false, "A", 2, 1, 3},
		{"the sibling started: its reservation is kept", true, "A", 1, 2, 3},
		{"a reservation no one holds", true, "C", 1, 3, 2},
	} {
		f := newFamily(threeChildren(), "our-root")
		parent := &pipeline.Agent{ID: "root", Session: sessiontest.New(t, "our-root", t.TempDir())}
		f.NewID(parent)
		f.NewID(parent)
		first, second := f.members[0], f.members[1]
		if first.index != 1 || second.index != 2 {
			t.Fatalf("%s: reservations %d, %d, want 1, 2 (creation order)", tc.name, first.index, second.index)
		}
		first.started, first.prompt = tc.firstStarted, "A"
		second.started, second.prompt = true, tc.secondTask
		f.mu.Lock()
		f.rebindLocked(second)
		f.mu.Unlock()
		if first.index != tc.first || second.index != tc.second {
			t.Errorf("%s: bound to %d and %d, want %d and %d", tc.name, first.index, second.index, tc.first, tc.second)
		}
		if f.reserved[tc.first] != first || f.reserved[tc.second] != second || f.reserved[tc.free] != nil {
			holders := map[int]string{}
			for n, m := range f.reserved {
				holders[n] = map[*member]string{first: "the first", second: "the second", nil: "none"}[m]
			}
			t.Errorf("%s: reservations %v, want %d: the first, %d: the second, %d: none", tc.name, holders, tc.first, tc.second, tc.free)
		}
	}
}
