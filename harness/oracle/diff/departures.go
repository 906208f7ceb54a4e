package diff

import (
	"strings"

	"github.com/dshsim/dshsim/harness/replay"
)

// A NamedDeparture is a difference from upstream that is deliberate and named
// in docs/: a result whose first difference reads Text is that departure,
// not a mismatch.
type NamedDeparture struct {
	// Name is the departure's name; Doc where docs/ names it.
	Name, Doc string
	// Text is a part of the result's Detail that only this departure shows.
	Text string
}

// Departures are the named departures the generator can meet (it avoids
// generating them, but a shrunk or mutated script may still reach one).
var Departures = []NamedDeparture{
	{
		Name: "escalation to the current mode",
		Doc:  "docs/replay.md#upstream-as-an-oracle",
		Text: `is not strictly wider than this call's current`,
	},
	{
		Name: "UserPromptSubmit hooks are recognised, not run",
		Doc:  "docs/hooks.md#departures-from-upstream",
		Text: "hook/invoked claude-code:UserPromptSubmit",
	},
}

// departureOf names the departure a mismatch is ("" when none).
func departureOf(r *replay.Result) string {
	detail := r.Detail()
	for _, d := range Departures {
		if strings.Contains(detail, d.Text) {
			return d.Name
		}
	}
	return ""
}
