package session

import (
	"encoding/json"
	"fmt"
)

// Recovery codes of a repaired call (VERBATIM, upstream's).
const (
	// ToolNotStarted: the model asked for the call, no tool/call was logged.
	ToolNotStarted = "TOOL_NOT_STARTED"
	// ToolOutcomeUnknown: the tool/call was logged, its result was not.
	ToolOutcomeUnknown = "TOOL_OUTCOME_UNKNOWN"
)

// The model-facing texts of a repaired call (VERBATIM, upstream's).
const (
	OutcomeUnknownText = "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly."
	NotStartedText     = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)

// Closer is one event [InterruptedTurnClosers] supplies: its type, seq,
// time, data and, for a repaired result, its source and surface op.
type Closer struct {
	Type            string
	Seq, Time       int64
	Data            any
	SourceEventSeqs []int64
	SurfaceOp       string
}

// repairedResult is the data of a repaired call's tool/result.
type repairedResult struct {
	Turn    int             `json:"turn"`
	Step    int             `json:"step"`
	Message repairedMessage `json:"message"`
	Error   repairedError   `json:"error"`
}

type repairedMessage struct {
	ID     string `json:"id"`
	Role   string `json:"role"`
	Source struct {
		Kind   string `json:"kind"`
		CallID string `json:"callId"`
	} `json:"source"`
	Content []repairedBlock `json:"content"`
}

type repairedBlock struct {
	Type       string `json:"type"`
	ToolCallID string `json:"toolCallId"`
	IsError    bool   `json:"isError"`
	Content    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

type repairedError struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// pendingCall is a call of the open turn's assistant messages without a
// result: its step and, once logged, its tool/call's seq.
type pendingCall struct {
	id      string
	step    int
	callSeq *int64
}

// InterruptedTurnClosers are the events that close the open turn a crash
// left at the end of events (none for a balanced or empty log), as
// upstream's crash-recovery repair writes them on resume: a result for
// every call of the turn's assistant messages that has none (outcome
// unknown when its tool/call was logged, not started when not; in the
// order the model asked for them), then a step/end for an open step and a
// turn/end interrupted. Seqs continue the log; times reuse the last
// event's.
func InterruptedTurnClosers(events []Event) ([]Closer, error) {
	openTurn, openStep, pending, err := scanOpenTurn(events)
	if err != nil || openTurn == nil {
		return nil, err
	}
	last := events[len(events)-1]
	seq, time := last.Seq+1, last.Time
	var out []Closer
	for _, c := range pending {
		text, code, name := NotStartedText, ToolNotStarted, "ToolNotStartedError"
		if c.callSeq != nil {
			text, code, name = OutcomeUnknownText, ToolOutcomeUnknown, "ToolOutcomeUnknownError"
		}
		m := repairedMessage{ID: fmt.Sprintf("interrupted-tool-result-%s-%d", c.id, seq), Role: "user"}
		m.Source.Kind, m.Source.CallID = "tool", c.id
		b := repairedBlock{Type: "tool-result", ToolCallID: c.id, IsError: true}
		b.Content = append(b.Content, struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", text})
		m.Content = []repairedBlock{b}
		cl := Closer{Type: KindToolResult, Seq: seq, Time: time, SurfaceOp: "append",
			Data: repairedResult{Turn: *openTurn, Step: c.step, Message: m, Error: repairedError{Name: name, Code: code}}}
		if c.callSeq != nil {
			cl.SourceEventSeqs = []int64{*c.callSeq}
		}
		out = append(out, cl)
		seq++
	}
	if openStep != nil {
		out = append(out, Closer{Type: KindStepEnd, Seq: seq, Time: time, Data: Step{Turn: *openTurn, Step: *openStep}})
		seq++
	}
	out = append(out, Closer{Type: KindTurnEnd, Seq: seq, Time: time, Data: TurnEnd{Turn: *openTurn, Reason: EndReason{Kind: "interrupted"}}})
	return out, nil
}

// scanOpenTurn folds events into the open turn at their end (nil: none),
// its open step and its calls without a result, in the order asked.
func scanOpenTurn(events []Event) (openTurn, openStep *int, pending []*pendingCall, err error) {
	for _, e := range events {
		var d struct {
			Turn    int    `json:"turn"`
			Step    int    `json:"step"`
			CallID  string `json:"callId"`
			Message struct {
				Content []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
				} `json:"content"`
				Source struct {
					CallID string `json:"callId"`
				} `json:"source"`
			} `json:"message"`
		}
		switch e.Type {
		case KindTurnStart, KindTurnEnd, KindStepStart, KindStepEnd, KindAssistantMessage, KindToolCall, KindToolResult:
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return nil, nil, nil, fmt.Errorf("session event seq %d (%s): %w", e.Seq, e.Type, err)
			}
		}
		switch e.Type {
		case KindTurnStart:
			t := d.Turn
			openTurn, openStep, pending = &t, nil, nil
		case KindTurnEnd:
			openTurn, openStep, pending = nil, nil, nil
		case KindStepStart:
			s := d.Step
			openStep = &s
		case KindStepEnd:
			openStep, pending = nil, nil
		case KindAssistantMessage:
			for _, b := range d.Message.Content {
				if b.Type == "tool-call" {
					pending = setPending(pending, b.ID, d.Step)
				}
			}
		case KindToolCall:
			for _, c := range pending {
				if c.id == d.CallID {
					s := e.Seq
					c.callSeq = &s
				}
			}
		case KindToolResult:
			pending = dropPending(pending, d.Message.Source.CallID)
		}
	}
	return openTurn, openStep, pending, nil
}

// setPending records call id of step; an id asked again keeps its first
// position and starts over (a map's set, as upstream's repair does).
func setPending(pending []*pendingCall, id string, step int) []*pendingCall {
	for _, c := range pending {
		if c.id == id {
			c.step, c.callSeq = step, nil
			return pending
		}
	}
	return append(pending, &pendingCall{id: id, step: step})
}

// dropPending removes call id.
func dropPending(pending []*pendingCall, id string) []*pendingCall {
	for i, c := range pending {
		if c.id == id {
			return append(pending[:i:i], pending[i+1:]...)
		}
	}
	return pending
}
