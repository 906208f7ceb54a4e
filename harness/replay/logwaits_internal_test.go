package replay

import (
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
)

func ev(typ, data string) session.Event {
	return session.Event{Type: typ, Data: json.RawMessage(data)}
}

// TestEventAfterTurnEnd: an event of the type counts only after the log's
// last turn/end, never before any turn ended.
func TestEventAfterTurnEnd(t *testing.T) {
	end := ev(session.KindTurnEnd, `{"turn":1}`)
	change := ev(session.KindGoalChange, `{}`)
	start := ev(session.KindTurnStart, `{"turn":2}`)
	for _, tc := range []struct {
		name string
		evs  []session.Event
		want bool
	}{
		{"after the turn's end", []session.Event{start, end, change}, true},
		{"no turn ended", []session.Event{start, change}, false},
		{"before the last turn's end", []session.Event{change, end}, false},
		{"after an earlier end, before the last", []session.Event{end, change, start, end}, false},
		{"another type after the end", []session.Event{end, start}, false},
	} {
		if got := eventAfterTurnEnd(tc.evs, session.KindGoalChange); got != tc.want {
			t.Errorf("%s: eventAfterTurnEnd = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGoalPhaseLogged: any goal/change holding the phase counts (an earlier
// one too, as upstream's harness reads the log); other events and other
// phases do not.
func TestGoalPhaseLogged(t *testing.T) {
	active := ev(session.KindGoalChange, `{"goal":{"phase":"active"}}`)
	paused := ev(session.KindGoalChange, `{"goal":{"phase":"paused"}}`)
	cleared := ev(session.KindGoalChange, `{"operation":"clear"}`)
	other := ev(session.KindUserMessage, `{"goal":{"phase":"paused"}}`)
	for _, tc := range []struct {
		name string
		evs  []session.Event
		want bool
	}{
		{"the last change", []session.Event{active, paused}, true},
		{"an earlier change", []session.Event{paused, active}, true},
		{"another phase only", []session.Event{active, cleared}, false},
		{"not a goal/change", []session.Event{other}, false},
	} {
		if got := goalPhaseLogged(tc.evs, "paused"); got != tc.want {
			t.Errorf("%s: goalPhaseLogged = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestInboxMessageLogged: a splice inserting a message whose text block
// holds the text counts; a removal, another block type or another event
// does not.
func TestInboxMessageLogged(t *testing.T) {
	inserted := ev(session.KindInboxSpliced, `{"inserted":[{"content":[{"type":"text","text":"<goal_round>\nRound: 1/2"}]}]}`)
	removed := ev(session.KindInboxSpliced, `{"removedCount":1,"inserted":[]}`)
	image := ev(session.KindInboxSpliced, `{"inserted":[{"content":[{"type":"image","text":"Round: 1/2"}]}]}`)
	message := ev(session.KindUserMessage, `{"content":[{"type":"text","text":"Round: 1/2"}]}`)
	for _, tc := range []struct {
		name string
		evs  []session.Event
		want bool
	}{
		{"inserted", []session.Event{removed, inserted}, true},
		{"removal only", []session.Event{removed}, false},
		{"not a text block", []session.Event{image}, false},
		{"not a splice", []session.Event{message}, false},
	} {
		if got := inboxMessageLogged(tc.evs, "Round: 1/2"); got != tc.want {
			t.Errorf("%s: inboxMessageLogged = %v, want %v", tc.name, got, tc.want)
		}
	}
}
