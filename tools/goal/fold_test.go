package goal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
)

// snap is a goal/change snapshot: op of goal g at revision rev, phase and
// maxGoalRounds, reason ("": none; else its JSON), rounds started and
// times.
func snap(op string, rev int64, obj, phase string, max int64, reason string, rounds, created, updated int64) string {
	r := ""
	if reason != "" {
		r = `,"blockedReason":` + reason
	}
	return fmt.Sprintf(`{"kind":"goal/change","version":1,"operation":%q,"goal":{"id":"g","revision":%d,"objective":%q,"phase":%q,"maxGoalRounds":%d%s},"roundsStarted":%d,"createdAt":%d,"updatedAt":%d}`,
		op, rev, obj, phase, max, r, rounds, created, updated)
}

// round is goal g's round message n at revision rev.
func round(rev, n int64) string {
	return fmt.Sprintf(`{"source":{"kind":"goal","goalId":"g","revision":%d,"round":%d}}`, rev, n)
}

// TestFoldRules: each rule of the strict fold, on a log that is good up
// to its last event: the last is refused, naming its seq, or accepted.
func TestFoldRules(t *testing.T) {
	create := snap("create", 1, "o", "active", 2, "", 0, 10, 10)
	reason := `{"code":"stuck","message":"m"}`
	blocked := snap("block", 2, "o", "blocked", 2, reason, 0, 10, 11)
	paused := snap("pause", 2, "o", "paused", 2, "", 0, 10, 11)
	complete := snap("complete", 2, "o", "complete", 2, "", 0, 10, 11)
	clear := func(rev, at int64) string {
		return fmt.Sprintf(`{"kind":"goal/change","version":1,"operation":"clear","cleared":{"id":"g","revision":%d},"clearedAt":%d}`, rev, at)
	}
	for _, tc := range []struct {
		name string
		log  []string // goal/change data, or "round:<rev>:<n>" for a round message
		want string   // "" accepted
	}{
		{"rounds up to the cap", []string{create, "round:1:1", "round:1:2"}, ""},
		{"a round past the cap", []string{snap("create", 1, "o", "active", 1, "", 0, 10, 10), "round:1:1", "round:1:2"}, "not the next admitted round"},
		{"a round of a paused goal", []string{create, paused, "round:2:1"}, "not the next admitted round"},
		{"a round of another revision", []string{create, "round:2:1"}, "not the next admitted round"},
		{"a negative createdAt", []string{snap("create", 1, "o", "active", 2, "", 0, -1, 10)}, "createdAt must be a non-negative safe integer"},
		{"revision 0", []string{snap("create", 0, "o", "active", 2, "", 0, 10, 10)}, "goal.revision must be a positive safe integer"},
		{"an active goal with a reason", []string{snap("create", 1, "o", "active", 2, reason, 0, 10, 10)}, "has the wrong fields"},
		{"a reason's code not kebab-case", []string{create, snap("block", 2, "o", "blocked", 2, `{"code":"Stuck","message":"m"}`, 0, 10, 11)}, "blockedReason.code must be lower-kebab-case"},
		{"a reason's message not normalized", []string{create, snap("block", 2, "o", "blocked", 2, `{"code":"stuck","message":"m "}`, 0, 10, 11)}, "blockedReason.message must be non-empty and normalized"},
		{"a clear", []string{create, clear(2, 10)}, ""},
		{"a clear before the last update", []string{create, clear(2, 9)}, "timestamp cannot precede"},
		{"a clear of the same revision", []string{create, clear(1, 11)}, "must advance the current goal by one revision"},
		{"a clear of revision 0", []string{create, clear(0, 11)}, "non-empty id and a positive revision"},
		{"a clear without a goal", []string{clear(1, 11)}, "goal clear requires a current goal"},
		{"a goal again after it completed", []string{create, complete, create}, "fresh active revision-one goal"},
		{"a create with rounds started", []string{snap("create", 1, "o", "active", 2, "", 1, 10, 10)}, "fresh active revision-one goal"},
		{"a create over an active goal", []string{create, strings.Replace(create, `"id":"g"`, `"id":"h"`, 1)}, "fresh active revision-one goal"},
		{"an update before the last", []string{snap("create", 1, "o", "active", 2, "", 0, 10, 12), snap("pause", 2, "o", "paused", 2, "", 0, 10, 11)}, "does not preserve the current counters"},
		{"an update at the same time", []string{create, snap("pause", 2, "o", "paused", 2, "", 0, 10, 10)}, ""},
		{"a pause that edits", []string{create, snap("pause", 2, "p", "paused", 2, "", 0, 10, 11)}, "cannot change objective or maxGoalRounds"},
		{"an edit", []string{create, snap("edit", 2, "p", "active", 3, "", 0, 10, 11)}, ""},
		{"an edit of the reason", []string{create, blocked, snap("edit", 3, "o", "blocked", 2, `{"code":"other","message":"m"}`, 0, 10, 12)}, "invalid phase transition"},
		{"an edit of the phase", []string{create, snap("edit", 2, "o", "paused", 2, "", 0, 10, 11)}, "invalid phase transition"},
		{"a resume with rounds left", []string{create, "round:1:1", snap("pause", 2, "o", "paused", 2, "", 1, 10, 11), snap("resume", 3, "o", "active", 2, "", 1, 10, 12)}, ""},
		{"a resume with the rounds spent", []string{create, "round:1:1", "round:1:2", snap("pause", 2, "o", "paused", 2, "", 2, 10, 11), snap("resume", 3, "o", "active", 2, "", 2, 10, 12)}, "invalid phase transition"},
		{"a complete of a complete goal", []string{create, complete, snap("complete", 3, "o", "complete", 2, "", 0, 10, 12)}, "invalid phase transition"},
		{"a block of a paused goal", []string{create, paused, snap("block", 3, "o", "blocked", 2, reason, 0, 10, 12)}, "invalid phase transition"},
		{"a pause of a paused goal", []string{create, paused, snap("pause", 3, "o", "paused", 2, "", 0, 10, 12)}, "invalid phase transition"},
		{"a complete of a blocked goal", []string{create, blocked, snap("complete", 3, "o", "complete", 2, "", 0, 10, 12)}, ""},
		{"a clear change with a goal", []string{create, strings.Replace(clear(2, 11), `"clearedAt"`, `"goal":{},"clearedAt"`, 1)}, "goal clear change must have exactly"},
		{"a version as a string", []string{strings.Replace(create, `"version":1`, `"version":"1"`, 1)}, "unsupported goal change version 1"},
		{"another kind", []string{strings.Replace(create, `"kind":"goal/change"`, `"kind":"goal/other"`, 1)}, `goal change kind must be "goal/change"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var evs []session.Event
			for i, d := range tc.log {
				e := session.Event{Type: session.KindGoalChange, Seq: int64(i + 1), Data: json.RawMessage(d)}
				var rev, n int64
				if _, err := fmt.Sscanf(d, "round:%d:%d", &rev, &n); err == nil {
					e.Type, e.Data = session.KindUserMessage, json.RawMessage(round(rev, n))
				}
				evs = append(evs, e)
			}
			_, err := Fold(evs)
			last := fmt.Sprintf("session event %d", len(evs))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Fold = %v, want the log accepted", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), last)):
				t.Fatalf("Fold = %v, want %q at %s", err, tc.want, last)
			}
		})
	}
}
