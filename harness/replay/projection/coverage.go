package projection

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
)

// Reasons an event, or a part of an event type, is not compared. Each is
// said once in a note, after the events it covers.
const (
	whyModel    = "the model's reply: the script the replay plays; its tool calls are compared as tool/call"
	whyRequest  = "the model request's route and configuration: the replay's constructed model names itself, not the recorded one"
	whyStep     = "step boundaries: one per scripted reply, so the replies fix them"
	whyTurnOpen = "opens the turn the compared events are grouped by"
	whyStaging  = "a message staged for the next step: when it is staged follows the run's timing (a job's completion); the message is compared where the model gets it"
	whySeedEnd  = "the end of a child's seed: the seed's descriptor and policy events are compared"
	whyPreset   = "the preset the policy knobs derive: the knobs are compared as sandbox/mode and approval/policy"
	whyCommand  = "a slash command's run: the replay drives prompts only (input.json's steps)"
)

// notCompared are the event types the projection leaves out, each with
// its reason. Every other type of recording.EventTypes is projected
// (TestEveryEventTypeIsCoveredOrNamed).
var notCompared = map[string]string{
	session.KindAssistantChunk:   whyModel,
	session.KindAssistantMessage: whyModel,
	session.KindRequestHeader:    whyRequest,
	session.KindRequestContext:   whyRequest,
	session.KindStepStart:        whyStep,
	session.KindStepEnd:          whyStep,
	kindTurnOpen:                 whyTurnOpen,
	session.KindEndSeed:          whySeedEnd,
	session.KindPermissionPreset: whyPreset,
	session.KindCommandRun:       whyCommand,
	session.KindCommandDone:      whyCommand,
}

// stagedSplice names the part of agent/inbox/spliced that is not compared:
// a splice into the next step's list (a job notice, a hook's context).
const stagedSplice = session.KindInboxSpliced + " next-step"

// uncompared is what of an event with type typ and data d the projection
// leaves out and why ("" when it is compared); an event the projection
// knows nothing of is an error naming it.
func uncompared(typ string, d map[string]any) (what, why string, err error) {
	if why, ok := notCompared[typ]; ok {
		return typ, why, nil
	}
	if typ == session.KindInboxSpliced && d["target"] == "next-step" {
		return stagedSplice, whyStaging, nil
	}
	if typ == session.KindUserMessage {
		src, _ := d["source"].(map[string]any)
		return "", "", fmt.Errorf("a user/message of source kind %q, which the replay neither compares nor knows to leave out", src["kind"])
	}
	if typ == session.KindInboxSpliced {
		return "", "", fmt.Errorf("an agent/inbox/spliced of target %q, which the replay neither compares nor knows to leave out", d["target"])
	}
	return "", "", fmt.Errorf("event type %q, which the replay neither compares nor knows to leave out", typ)
}

// Coverage counts a log's events by how the projection treats them.
type Coverage struct {
	// Compared counts the projected events per event type.
	Compared map[string]int `json:"compared"`
	// Left counts the events left out per event type (or part of one),
	// Why gives each one's reason.
	Left map[string]int    `json:"left,omitempty"`
	Why  map[string]string `json:"-"`
}

func (c *Coverage) compared(typ string) {
	if c.Compared == nil {
		c.Compared = map[string]int{}
	}
	c.Compared[typ]++
}

func (c *Coverage) left(what, why string) {
	if c.Left == nil {
		c.Left, c.Why = map[string]int{}, map[string]string{}
	}
	c.Left[what]++
	c.Why[what] = why
}

// Note renders one line for the log named file: the compared events per
// type, then the ones not compared, grouped by their reason, e.g.
// "session.jsonl: events compared tool/call 1, tool/result 1; not compared:
// assistant/chunk 3, assistant/message 1 (the model's reply: ...)".
func (c Coverage) Note(file string) string {
	var compared []string
	for _, t := range slices.Sorted(maps.Keys(c.Compared)) {
		compared = append(compared, fmt.Sprintf("%s %d", t, c.Compared[t]))
	}
	byWhy := map[string][]string{}
	var whys []string
	for _, w := range slices.Sorted(maps.Keys(c.Left)) {
		why := c.Why[w]
		if byWhy[why] == nil {
			whys = append(whys, why)
		}
		byWhy[why] = append(byWhy[why], fmt.Sprintf("%s %d", w, c.Left[w]))
	}
	var left []string
	for _, why := range whys {
		left = append(left, strings.Join(byWhy[why], ", ")+" ("+why+")")
	}
	if len(compared) == 0 {
		compared = []string{"none"}
	}
	if len(left) == 0 {
		left = []string{"none"}
	}
	return fmt.Sprintf("%s: events compared %s; not compared: %s", file, strings.Join(compared, ", "), strings.Join(left, "; "))
}

// decode is an event's data as a JSON object.
func decode(data json.RawMessage) (map[string]any, error) {
	var d map[string]any
	err := json.Unmarshal(data, &d)
	return d, err
}

// LeftBeyond is the part of c's left-out events whose type (or part of
// one) other leaves out none of; nothing is counted as compared.
func (c Coverage) LeftBeyond(other Coverage) Coverage {
	var out Coverage
	for what, n := range c.Left {
		if other.Left[what] == 0 {
			for range n {
				out.left(what, c.Why[what])
			}
		}
	}
	return out
}
