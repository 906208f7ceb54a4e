package todo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the tool name.
const Name = "todo_write"

// Statuses of a todo (VERBATIM).
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
)

const (
	descriptionHead     = "Record and update a structured task list for the current work. Send the ENTIRE list every call — it REPLACES the previous list (there are no partial updates, no per-item edits). Use it to plan multi-step work and show progress: add one todo per concrete step before you start. "
	descriptionParallel = "Mark every todo being actively worked on `in_progress` — several at once when work genuinely runs in parallel (e.g. concurrent subagents or background commands), one for sequential work; while work remains, at least one task should be `in_progress`. "
	descriptionSingle   = "Keep AT MOST ONE todo `in_progress` at a time; while work remains, exactly one active task should be `in_progress`. "
	descriptionTail     = "Mark a todo `completed` the moment it is done (do not batch completions), and allow no `in_progress` item only once all work is complete. Skip the list for trivial single-step tasks. Statuses: `pending` (not started), `in_progress` (being worked on now), `completed` (finished)."
)

// Parameters is the model-facing parameter schema, in upstream's key order.
const Parameters = `{"type":"object","properties":{"todos":{"type":"array","description":"The COMPLETE task list, replacing any previous list.","items":{"type":"object","additionalProperties":false,"properties":{"content":{"type":"string","description":"What the task is — a short imperative line."},"status":{"type":"string","description":"pending (not started) | in_progress (now) | completed (done).","enum":["pending","in_progress","completed"]}},"required":["content","status"]}}},"required":["todos"]}`

// Config configures the tool.
type Config struct {
	// AllowParallelInProgress lets several todos be in_progress at once
	// (the acp-agent sets it).
	AllowParallelInProgress bool
}

// Description is the model-facing description for allowParallel.
func Description(allowParallel bool) string {
	mid := descriptionSingle
	if allowParallel {
		mid = descriptionParallel
	}
	return descriptionHead + mid + descriptionTail
}

// Item is one todo as the event stores it.
type Item struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// counts is the value's tally, in upstream's key order.
type counts struct {
	Pending    int `json:"pending"`
	InProgress int `json:"inProgress"`
	Completed  int `json:"completed"`
}

// errNoSession refuses a call without an agent session.
var errNoSession = errors.New("todo_write requires an owning agent session")

// New returns todo_write's registration (no prompt section; every call
// yields, as it appends to the session log).
func New(cfg Config) ([]toolreg.Tool, error) {
	return []toolreg.Tool{{Def: pipeline.Tool{
		Name:        Name,
		Description: Description(cfg.AllowParallelInProgress),
		Parameters:  json.RawMessage(Parameters),
		Run:         cfg.run,
	}}}, nil
}

func (cfg Config) run(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var args struct {
		Todos []Item `json:"todos"`
	}
	if err := call.DecodeArgs(&args); err != nil {
		return pipeline.Output{}, fmt.Errorf("invalid todos: %v", err)
	}
	todos, err := List(args.Todos, cfg.AllowParallelInProgress)
	if err != nil {
		return pipeline.Output{}, err
	}
	agent := call.Agent()
	if agent == nil || agent.Session == nil {
		return pipeline.Output{}, errNoSession
	}
	if _, err := agent.Session.Append(session.KindTodoWrite, struct {
		Todos []Item `json:"todos"`
	}{todos}); err != nil {
		return pipeline.Output{}, fmt.Errorf("todo_write: append %s: %w", session.KindTodoWrite, err)
	}
	var c counts
	for _, t := range todos {
		switch t.Status {
		case Pending:
			c.Pending++
		case InProgress:
			c.InProgress++
		case Completed:
			c.Completed++
		}
	}
	value, _ := json.Marshal(struct {
		Todos  []Item `json:"todos"`
		Counts counts `json:"counts"`
	}{todos, c})
	text := fmt.Sprintf("Updated todo list: %d pending, %d in progress, %d completed.", c.Pending, c.InProgress, c.Completed)
	return pipeline.Output{Value: value, Content: []pipeline.Block{pipeline.TextBlock(text)}}, nil
}

// List checks a schema-checked list and returns its canonical form:
// contents trimmed, non-empty and unique, and at most one in_progress item
// unless allowParallel (upstream's texts).
func List(raw []Item, allowParallel bool) ([]Item, error) {
	todos := make([]Item, 0, len(raw))
	seen := map[string]bool{}
	active := 0
	for _, it := range raw {
		content := jsjson.Trim(it.Content)
		if content == "" {
			return nil, errors.New("invalid todo: `content` must be a non-empty string")
		}
		if seen[content] {
			return nil, fmt.Errorf("invalid todos: duplicate content %s", jsjson.Quote(content))
		}
		seen[content] = true
		if it.Status == InProgress {
			active++
		}
		todos = append(todos, Item{Content: content, Status: it.Status})
	}
	if !allowParallel && active > 1 {
		return nil, fmt.Errorf("invalid todos: at most one task may be in_progress (got %d)", active)
	}
	return todos, nil
}
