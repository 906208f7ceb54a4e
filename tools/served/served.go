package served

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// ErrSafetyStack refuses a served body for a tool of the safety stack
// (a registration whose SafetyStack is set).
var ErrSafetyStack = errors.New("a served body can never stand in for a tool of the safety stack")

// Recorded is one recorded call and its result.
type Recorded struct {
	// Name and Arguments are the recorded tool/call's.
	Name      string
	Arguments json.RawMessage
	// Content, IsError, Meta and Error are the recorded tool/result's
	// (Error nil when the result carried no {name, code}).
	Content []pipeline.Block
	IsError bool
	Meta    json.RawMessage
	Error   *pipeline.ErrorInfo
	// Value is the canonical value a run_code program received from the
	// call (nil when the recording does not show it; see [NestedValue]),
	// and ValueNote says why it is nil.
	Value     json.RawMessage
	ValueNote string
}

// Source finds the recorded call that answers call: the recording's call
// with the same id (see [Matches] for telling apart calls of several
// sessions that share an id), or an error saying why there is none
// ([NoResult] when the recording does not hold the id).
type Source func(call *pipeline.Call) (Recorded, error)

// NoResult is the error of a Source whose recording has no result for the
// call id.
func NoResult(callID string) error {
	return fmt.Errorf("the recording has no result for call %s", callID)
}

// Table is a Source over one session's calls by id.
func Table(calls map[string]Recorded) Source {
	return func(call *pipeline.Call) (Recorded, error) {
		r, ok := calls[call.CallID()]
		if !ok {
			return Recorded{}, NoResult(call.CallID())
		}
		return r, nil
	}
}

// Matches reports whether r is a call of call's tool with call's arguments
// (as parsed JSON): the only record a served body answers call with.
func Matches(r Recorded, call *pipeline.Call) bool {
	return r.Name == call.Name() && sameJSON(r.Arguments, call.Args())
}

// Wrap returns t with a body that serves each call's result from src: the
// recorded call with the same id, the same tool and the same arguments (as
// parsed JSON) answers with its recorded content, meta, error and value;
// any other call fails, and so does a nested call (a run_code program's)
// whose value the recording does not show. Everything else of the
// registration (the definition but its body, the prompt section, the yield
// rule) is kept, and everything around the body (the schema check, the
// hooks, approval, guards, spill, the session log) still runs. A tool of the
// safety stack is refused with ErrSafetyStack.
func Wrap(t toolreg.Tool, src Source) (toolreg.Tool, error) {
	name := t.Name()
	if t.SafetyStack {
		return toolreg.Tool{}, fmt.Errorf("served %s: %w", name, ErrSafetyStack)
	}
	if src == nil {
		return toolreg.Tool{}, fmt.Errorf("served %s: no recording to serve from", name)
	}
	t.Def.Run = func(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
		return serve(name, src, call)
	}
	return t, nil
}

func serve(name string, src Source, call *pipeline.Call) (pipeline.Output, error) {
	r, err := src(call)
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("served %s: %w", name, err)
	}
	if r.Name != name {
		return pipeline.Output{}, fmt.Errorf("served %s: the recording's call %s is of %s", name, call.CallID(), r.Name)
	}
	if !sameJSON(r.Arguments, call.Args()) {
		return pipeline.Output{}, fmt.Errorf("served %s: call %s has other arguments than the recording's", name, call.CallID())
	}
	if r.IsError {
		msg := strings.TrimPrefix(text(r.Content), "Error: ")
		if r.Error != nil {
			return pipeline.Output{}, pipeline.NewError(r.Error.Name, r.Error.Code, msg)
		}
		return pipeline.Output{}, errors.New(msg)
	}
	if call.Parent() != nil && r.Value == nil {
		// a program would receive null where upstream's got a value
		why := ""
		if r.ValueNote != "" {
			why = " (" + r.ValueNote + ")"
		}
		return pipeline.Output{}, fmt.Errorf("served %s: nested call %s: the recording does not show the value the program received%s", name, call.CallID(), why)
	}
	return pipeline.Output{Content: append([]pipeline.Block(nil), r.Content...), Meta: r.Meta, Value: r.Value}, nil
}

func text(bs []pipeline.Block) string {
	var b strings.Builder
	for _, c := range bs {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
