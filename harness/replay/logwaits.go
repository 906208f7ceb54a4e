package replay

import (
	"encoding/json"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
)

// The harness's waits on the persisted log, as upstream's snapshot
// harness polls the session's JSONL: pure functions of the log's events.

// eventAfterTurnEnd reports whether an event of type typ follows the log's
// last turn/end (waitForEventAfterTurnEnd); false before any turn ended.
func eventAfterTurnEnd(evs []session.Event, typ string) bool {
	end, last := -1, -1
	for i, e := range evs {
		if e.Type == session.KindTurnEnd {
			end = i
		}
		if e.Type == typ {
			last = i
		}
	}
	return end >= 0 && last > end
}

// goalPhaseLogged reports whether a goal/change of the log holds phase
// (waitForGoalPhase: any snapshot, not only the latest, as upstream's).
func goalPhaseLogged(evs []session.Event, phase string) bool {
	for _, e := range evs {
		if e.Type != session.KindGoalChange {
			continue
		}
		var d struct {
			Goal *struct {
				Phase string `json:"phase"`
			} `json:"goal"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Goal != nil && d.Goal.Phase == phase {
			return true
		}
	}
	return false
}

// inboxMessageLogged reports whether an inbox splice of the log inserted a
// message with a text block holding text (waitForInboxMessage).
func inboxMessageLogged(evs []session.Event, text string) bool {
	for _, e := range evs {
		if e.Type != session.KindInboxSpliced {
			continue
		}
		var d struct {
			Inserted []struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"inserted"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		for _, m := range d.Inserted {
			for _, b := range m.Content {
				if b.Type == "text" && strings.Contains(b.Text, text) {
					return true
				}
			}
		}
	}
	return false
}
