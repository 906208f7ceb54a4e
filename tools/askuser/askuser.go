package askuser

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the tool's name.
const Name = "ask_user_question"

// Description is the tool's VERBATIM description.
const Description = "Ask the user a concise question when you need confirmation, a choice, or missing information before proceeding. Send one or more questions, each with a stable id that will be echoed in the answer."

// parameters is the tool's VERBATIM parameter schema (key order as
// upstream's sidecar stores it).
const parameters = `{"type":"object","properties":{"questions":{"type":"array","description":"Questions to ask the user before continuing.","items":{"type":"object","additionalProperties":true,"properties":{"id":{"type":"string","description":"Stable id for this question; echoed in the answer."},"question":{"type":"string","description":"The specific question to ask the user."},"header":{"type":"string","description":"Optional short heading for the question, such as \"Confirm\" or \"Choose Mode\"."},"options":{"type":"array","description":"Optional choices to show the user. If you recommend one, put it first and append \"(Recommended)\" to that label.","items":{"type":"object","additionalProperties":true,"properties":{"label":{"type":"string","description":"Short user-facing option label."},"description":{"type":"string","description":"One sentence explaining the tradeoff or impact."}},"required":["label"]}},"multi_select":{"type":"boolean","description":"Whether the user may select more than one option. Defaults to false."}},"required":["id","question"]}}},"required":["questions"]}`

// Question is one question as the answerer gets it.
type Question struct {
	ID          string   `json:"id"`
	Question    string   `json:"question"`
	Header      string   `json:"header,omitempty"`
	Options     []Option `json:"options,omitempty"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
	// Detail is a longer text the question presents (a plan under review).
	Detail string `json:"detail,omitempty"`
	// Intent says what the answer decides, for a client that renders it
	// as its own card (a plan review); nil: a plain question.
	Intent *Intent `json:"intent,omitempty"`
}

// Intent is what a question's answer decides: Kind (plan-review) and the
// option label that approves.
type Intent struct {
	Kind    string `json:"kind"`
	Approve string `json:"approve"`
}

// Option is one offered choice.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Answer is the answer to one question.
type Answer struct {
	ID       string   `json:"id"`
	Selected []string `json:"selected"`
	Custom   string   `json:"custom,omitempty"`
}

// Answerer asks the person at the client (nil: nobody can be asked).
type Answerer func(ctx context.Context, questions []Question) ([]Answer, error)

// The service's refusals (VERBATIM, UserQuestionError with these codes).
var (
	errDelegated  = pipeline.NewError("UserQuestionError", "DELEGATED_CALLER", "human interaction is unavailable while the calling agent is owned by another live agent; include the unresolved question or decision in the child agent's final result")
	errNoProvider = pipeline.NewError("UserQuestionError", "NO_PROVIDER", "no user-questions provider is registered")
	errEmpty      = pipeline.NewError("UserQuestionError", "EMPTY_QUESTIONS", "ask_user_question requires at least one question")
	errAborted    = pipeline.NewError("UserQuestionError", "ASK_ABORTED", "ask_user_question was aborted before the user answered")
)

// Config configures ask_user_question.
type Config struct {
	// Ask answers a root agent's questions (nil: they are refused).
	Ask Answerer
}

// New returns ask_user_question's registration over cfg.Ask.
func New(cfg Config) ([]toolreg.Tool, error) {
	ask := cfg.Ask
	return []toolreg.Tool{{Def: pipeline.Tool{Name: Name, Description: Description, Parameters: json.RawMessage(parameters), Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		return run(ctx, call, ask)
	}}}}, nil
}

// run checks as upstream's service does, in its order: an aborted call,
// no question, a delegated caller, then nobody to ask.
func run(ctx context.Context, call *pipeline.Call, ask Answerer) (pipeline.Output, error) {
	var a struct {
		Questions []struct {
			Question
			MultiSelect bool `json:"multi_select"`
		} `json:"questions"`
	}
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	switch {
	case ctx.Err() != nil:
		return pipeline.Output{}, errAborted
	case len(a.Questions) == 0:
		return pipeline.Output{}, errEmpty
	case Delegated(call.Agent()):
		return pipeline.Output{}, errDelegated
	case ask == nil:
		return pipeline.Output{}, errNoProvider
	}
	qs := make([]Question, len(a.Questions))
	for i, q := range a.Questions {
		qs[i] = q.Question
		qs[i].MultiSelect = q.MultiSelect
	}
	answers, err := ask(ctx, qs)
	if err != nil {
		return pipeline.Output{}, err
	}
	value, err := json.Marshal(struct {
		Answers []Answer `json:"answers"`
	}{answers})
	if err != nil {
		return pipeline.Output{}, err
	}
	return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(string(value))}, Value: value}, nil
}

// Delegated reports whether agent is owned by another agent (its session
// names a parent): only a root agent may ask the user.
func Delegated(agent *pipeline.Agent) bool {
	return agent != nil && agent.Session != nil && agent.Session.Header().ParentSession != ""
}
