package goal

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// The tool names.
const (
	GetName    = "get_goal"
	CreateName = "create_goal"
	UpdateName = "update_goal"
)

// ToolErrorName is the class of the tools' own refusals (upstream's
// HarnessError).
const ToolErrorName = "HarnessError"

// Descriptions and the prompt section (VERBATIM).
const (
	getDescription    = "Read the current same-session goal, including its exact id/revision, objective, phase, completed continuation rounds, round limit, blocker reason when present, and whether another continuation is armed. Call this before updating a goal."
	createDescription = "Create one persisted same-session completion goal when the current direct human request is a long-running objective that should continue across autonomous goal rounds. You may infer that intent without requiring the user to say \"create a goal\". Do not use this for trivial single-turn work. Execution rejects non-human and subagent authority."
	updateDescription = "Update the exact current goal revision. edit, pause, and resume require a direct top-level human request. During an automatic continuation of the current goal, complete and blocked are also allowed. blocked is rejected before the configured minimum round count; the model remains responsible for judging that the same condition persisted across those rounds and must explain it in blocked_reason."
	guidanceFormat    = "Use goal tools for one long-running completion objective in the current session. create_goal may infer goal intent from a direct human request in any language; do not create a goal for routine single-turn work. Call get_goal before update_goal and copy its exact goal_id and revision. After session resume or fork, an active goal is disarmed: when a human asks to continue or resume in any wording or language, use update_goal action resume to rearm it. Mark complete only when the objective is actually achieved. Mark blocked only after the same blocking condition persists for at least %d consecutive goal rounds, and report that concrete condition in blocked_reason; difficulty, uncertainty, or useful remaining work is not blocked."
)

// Parameter and output schemas, as upstream's defineTool renders them.
const (
	getParameters    = `{"type":"object","properties":{}}`
	createParameters = `{"type":"object","properties":{"objective":{"type":"string","description":"The concrete completion objective inferred from the direct human request."},"max_goal_rounds":{"type":"number","description":"Optional positive safe-integer limit on automatic continuation rounds."}},"required":["objective"]}`
	updateParameters = `{"type":"object","properties":{"goal_id":{"type":"string","description":"Exact id returned by get_goal."},"revision":{"type":"number","description":"Exact positive revision returned by get_goal."},"action":{"type":"string","description":"edit | pause | resume | complete | blocked","enum":["edit","pause","resume","complete","blocked"]},"objective":{"type":"string","description":"Replacement objective; valid only with action edit."},"max_goal_rounds":{"type":"number","description":"Replacement cap; valid only with action edit."},"blocked_reason":{"type":"string","description":"Concrete blocking condition; required only with action blocked."}},"required":["goal_id","revision","action"]}`
	outputSchema     = `{"oneOf":[{"type":"object","additionalProperties":false,"properties":{"goal":{"type":"null"}},"required":["goal"]},{"type":"object","additionalProperties":false,"properties":{"goal":{"type":"object","additionalProperties":false,"properties":{"id":{"type":"string"},"revision":{"type":"integer"},"objective":{"type":"string"},"phase":{"type":"string","enum":["active","paused","blocked","complete"]},"roundsStarted":{"type":"integer"},"maxGoalRounds":{"type":"integer"},"blockedReason":{"type":"object","additionalProperties":false,"properties":{"code":{"type":"string"},"message":{"type":"string"}},"required":["code","message"]}},"required":["id","revision","objective","phase","roundsStarted","maxGoalRounds"]},"activation":{"type":"string","enum":["armed","disarmed"]}},"required":["goal","activation"]}]}`
)

// SectionOrder is the tool:goal section's order.
const SectionOrder = 114

// Config configures the goal tools.
type Config struct {
	// Goals is the goal domain the tools act on (required).
	Goals *Service
	// BlockedAfterConsecutiveRounds is the round count before a goal
	// round may report blocked (0: upstream's 3).
	BlockedAfterConsecutiveRounds int
}

// New returns the three goal tools (get_goal, create_goal, update_goal)
// and their one tool:goal prompt section (get_goal's registration holds
// it: upstream registers it once, beside the three).
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.Goals == nil {
		return nil, fmt.Errorf("goal tools: no goal service")
	}
	if cfg.BlockedAfterConsecutiveRounds < 0 {
		return nil, fmt.Errorf("goal tools: blockedAfterConsecutiveRounds must be a positive safe integer")
	}
	if cfg.BlockedAfterConsecutiveRounds == 0 {
		cfg.BlockedAfterConsecutiveRounds = 3
	}
	section := &toolreg.Section{Name: "tool:goal", Order: SectionOrder, Text: fmt.Sprintf(guidanceFormat, cfg.BlockedAfterConsecutiveRounds)}
	def := func(name, desc, params string, run func(*pipeline.Call) (*View, []pipeline.ContextMessage, error)) pipeline.Tool {
		return pipeline.Tool{Name: name, Description: desc, Parameters: json.RawMessage(params), OutputSchema: json.RawMessage(outputSchema),
			Run: func(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
				v, msgs, err := run(call)
				if err != nil {
					return pipeline.Output{}, err
				}
				out, err := output(v)
				out.ContextMessages = msgs
				return out, err
			}}
	}
	plain := func(run func(*pipeline.Call) (*View, error)) func(*pipeline.Call) (*View, []pipeline.ContextMessage, error) {
		return func(call *pipeline.Call) (*View, []pipeline.ContextMessage, error) {
			v, err := run(call)
			return v, nil, err
		}
	}
	return []toolreg.Tool{
		{Def: def(GetName, getDescription, getParameters, plain(cfg.get)), Section: section, Yields: toolreg.NoYield},
		{Def: def(CreateName, createDescription, createParameters, plain(cfg.create)), Yields: toolreg.NoYield},
		{Def: def(UpdateName, updateDescription, updateParameters, cfg.update), Yields: toolreg.NoYield},
	}, nil
}

// value is the tools' canonical value, in upstream's key order.
type value struct {
	Goal       *valueGoal `json:"goal"`
	Activation string     `json:"activation,omitempty"`
}

type valueGoal struct {
	ID            string       `json:"id"`
	Revision      int64        `json:"revision"`
	Objective     string       `json:"objective"`
	Phase         string       `json:"phase"`
	RoundsStarted int64        `json:"roundsStarted"`
	MaxGoalRounds int64        `json:"maxGoalRounds"`
	BlockedReason *BlockReason `json:"blockedReason,omitempty"`
}

// output renders v (nil: no goal) as the value and its JSON text.
func output(v *View) (pipeline.Output, error) {
	var val value
	if v != nil {
		val = value{Goal: &valueGoal{v.ID, v.Revision, v.Objective, v.Phase, v.RoundsStarted, v.MaxGoalRounds, v.BlockedReason}, Activation: v.Activation}
	}
	b, err := jsjson.Marshal(val)
	if err != nil {
		return pipeline.Output{}, err
	}
	return pipeline.Output{Value: b, Content: []pipeline.Block{pipeline.TextBlock(string(b))}}, nil
}

func refuse(code, msg string) error { return pipeline.NewError(ToolErrorName, code, msg) }

// execution is an authenticated call: its session and the events of its
// open turn (after its turn/start).
type execution struct {
	log  *session.Log
	root bool
	turn []session.Event
}

// authenticate resolves the calling agent and its open turn.
func authenticate(call *pipeline.Call) (*execution, error) {
	a := call.Agent()
	if a == nil || a.Session == nil {
		return nil, refuse("GOAL_TOOL_AGENT_REQUIRED", "goal tools require a calling agent")
	}
	events, err := a.Session.Events()
	if err != nil {
		return nil, err
	}
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case session.KindTurnEnd:
			i = -1
		case session.KindTurnStart:
			h := a.Session.Header()
			return &execution{log: a.Session, root: h.ParentSession == "", turn: events[i+1:]}, nil
		}
	}
	return nil, refuse("GOAL_TOOL_DRIVER_REQUIRED", "goal tools require an open model turn")
}

// directHuman reports whether a user's own message entered this turn of
// a top-level agent.
func (x *execution) directHuman() bool {
	if !x.root {
		return false
	}
	for _, e := range x.turn {
		if e.Type == session.KindUserMessage && sourceKind(e.Data) == "user" {
			return true
		}
	}
	return false
}

// goalRound reports whether this turn is g's exact admitted round.
func (x *execution) goalRound(g *View) bool {
	for _, e := range x.turn {
		var d struct {
			Source RoundSource `json:"source"`
		}
		if e.Type == session.KindUserMessage && json.Unmarshal(e.Data, &d) == nil && d.Source.Kind == SourceKind &&
			d.Source.GoalID == g.ID && d.Source.Revision == g.Revision && d.Source.Round == g.RoundsStarted {
			return true
		}
	}
	return false
}

func sourceKind(data json.RawMessage) string {
	var d struct {
		Source struct {
			Kind string `json:"kind"`
		} `json:"source"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Source.Kind
}

func (x *execution) requireDirectHuman() error {
	if x.directHuman() {
		return nil
	}
	return refuse("GOAL_TOOL_AUTHORITY_REQUIRED", "this goal operation requires a direct human turn on a top-level agent")
}

func (cfg Config) get(call *pipeline.Call) (*View, error) {
	x, err := authenticate(call)
	if err != nil {
		return nil, err
	}
	return cfg.Goals.Get(x.log)
}

func (cfg Config) create(call *pipeline.Call) (*View, error) {
	var args struct {
		Objective     string   `json:"objective"`
		MaxGoalRounds *float64 `json:"max_goal_rounds"`
	}
	if err := call.DecodeArgs(&args); err != nil {
		return nil, err
	}
	x, err := authenticate(call)
	if err != nil {
		return nil, err
	}
	if err := x.requireDirectHuman(); err != nil {
		return nil, err
	}
	return cfg.Goals.Create(x.log, args.Objective, args.MaxGoalRounds)
}
