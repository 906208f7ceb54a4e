package repeat

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"unicode/utf16"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
)

// Plugin is the source plugin of every reminder (VERBATIM).
const Plugin = "repeat-tool-reminder"

// Gentle is the first threshold's reminder (VERBATIM).
const Gentle = "You are repeating the exact same tool call with identical arguments. Carefully analyze the previous result before calling again: if the task is not complete, try a different approach or different arguments instead of repeating the call."

// DefaultThresholds are upstream's run lengths that remind.
var DefaultThresholds = []int{3, 5, 8}

// DefaultPreviewChars bounds the arguments quoted in [Detailed].
const DefaultPreviewChars = 500

// Detailed is a later threshold's reminder (VERBATIM).
func Detailed(tool string, count int, arguments string) string {
	return fmt.Sprintf("Repeated tool call detected:\n- tool: %s\n- consecutive_calls: %d\n- arguments: %s\nThe repeated calls are not making progress. Do not call this tool with these exact arguments again. Inspect the latest result and choose a different action, different arguments, or finish the task if enough evidence has been gathered.", tool, count, arguments)
}

// Reminder is one reminder listener: its thresholds and the run of each
// agent.
type Reminder struct {
	thresholds []int
	preview    int

	mu     sync.Mutex
	chains map[*pipeline.Agent]chain
}

type chain struct {
	key   string
	count int
}

// New returns a reminder with thresholds (nil: [DefaultThresholds]); each
// must be an integer >= 2, without duplicates, as upstream checks.
func New(thresholds []int) (*Reminder, error) {
	if thresholds == nil {
		thresholds = DefaultThresholds
	}
	if len(thresholds) == 0 {
		return nil, fmt.Errorf("%s: `thresholds` must not be empty", Plugin)
	}
	sorted := slices.Clone(thresholds)
	slices.Sort(sorted)
	for i, t := range sorted {
		if t < 2 {
			return nil, fmt.Errorf("%s: invalid threshold %d — every threshold must be an integer >= 2", Plugin, t)
		}
		if i > 0 && sorted[i-1] == t {
			return nil, fmt.Errorf("%s: `thresholds` must not contain duplicates", Plugin)
		}
	}
	return &Reminder{thresholds: sorted, preview: DefaultPreviewChars, chains: map[*pipeline.Agent]chain{}}, nil
}

// Register adds the listener to reg (inside the ones already registered)
// and returns its removal. Register it before the hook bridges, so its
// reminder comes before their contexts.
func (r *Reminder) Register(reg *pipeline.Registry) (remove func()) {
	return reg.OnPostExecute(r.PostExecute)
}

// PostExecute counts the call, lets the inner listeners decide, and puts
// the reminder first among the decision's context messages when the run
// reached a threshold.
func (r *Reminder) PostExecute(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
	reminder := r.observe(call)
	d, err := next()
	if err != nil || reminder == nil {
		return d, err
	}
	d.ContextMessages = append([]pipeline.ContextMessage{*reminder}, d.ContextMessages...)
	return d, nil
}

// Reset forgets agent's run (a user's message entered a step).
func (r *Reminder) Reset(agent *pipeline.Agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.chains, agent)
}

// observe advances the calling agent's run and returns the reminder due at
// its new length (nil: none, or a call without an agent).
func (r *Reminder) observe(call *pipeline.Call) *pipeline.ContextMessage {
	agent := call.Agent()
	if agent == nil {
		return nil
	}
	canonical := Canonical(call.Args())
	key := jsjson.Quote(call.Name()) + "\x00" + canonical
	r.mu.Lock()
	c := r.chains[agent]
	if c.key == key {
		c.count++
	} else {
		c = chain{key: key, count: 1}
	}
	r.chains[agent] = c
	r.mu.Unlock()
	if !slices.Contains(r.thresholds, c.count) {
		return nil
	}
	text := Gentle
	if c.count != r.thresholds[0] {
		text = Detailed(call.Name(), c.count, preview(canonical, r.preview))
	}
	return &pipeline.ContextMessage{Plugin: Plugin, Texts: []string{text}, Form: "notice", Summary: fmt.Sprintf("%s × %d", call.Name(), c.count)}
}

// Canonical is the arguments' canonical form: parsed as JSON (the raw text
// as a string when they are not JSON) and written with every object's keys
// sorted.
func Canonical(args []byte) string {
	v, err := jsjson.Parse(args)
	if err != nil {
		return jsjson.Quote(string(args))
	}
	return jsjson.Stringify(jsjson.SortedKeys(v))
}

// preview cuts canonical at limit UTF-16 code units, saying how many more
// there were.
func preview(canonical string, limit int) string {
	units := utf16.Encode([]rune(canonical))
	if len(units) <= limit {
		return canonical
	}
	return fmt.Sprintf("%s… (+%d more chars)", string(utf16.Decode(units[:limit])), len(units)-limit)
}
