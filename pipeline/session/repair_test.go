package session

import (
	"encoding/json"
	"strings"
	"testing"
)

func ev(typ string, seq int64, data string) Event {
	return Event{Type: typ, Seq: seq, Time: 10 + seq, Data: json.RawMessage(data)}
}

// closerLines renders closers as log lines (type, seq, time, data, sources).
func closerLines(t *testing.T, cs []Closer) []string {
	t.Helper()
	var out []string
	for _, c := range cs {
		b, err := json.Marshal(c.Data)
		if err != nil {
			t.Fatal(err)
		}
		line := c.Type + " " + string(b)
		if c.SourceEventSeqs != nil {
			s, _ := json.Marshal(c.SourceEventSeqs)
			line += " " + string(s)
		}
		out = append(out, line)
	}
	return out
}

// TestInterruptedTurnClosers: as upstream's repair closes a crash tail.
func TestInterruptedTurnClosers(t *testing.T) {
	start := ev(KindTurnStart, 0, `{"turn":1}`)
	step := ev(KindStepStart, 1, `{"turn":1,"step":1}`)
	asked := ev(KindAssistantMessage, 2, `{"turn":1,"step":1,"message":{"content":[{"type":"tool-call","id":"a"},{"type":"text"},{"type":"tool-call","id":"b"}]}}`)
	callA := ev(KindToolCall, 3, `{"turn":1,"step":1,"callId":"a","name":"w"}`)
	unknown := `tool/result {"turn":1,"step":1,"message":{"id":"interrupted-tool-result-a-4","role":"user","source":{"kind":"tool","callId":"a"},"content":[{"type":"tool-result","toolCallId":"a","isError":true,"content":[{"type":"text","text":"` + OutcomeUnknownText + `"}]}]},"error":{"name":"ToolOutcomeUnknownError","code":"TOOL_OUTCOME_UNKNOWN"}} [3]`
	tests := []struct {
		name   string
		events []Event
		want   []string
	}{
		{"empty log", nil, nil},
		{"balanced log", []Event{start, ev(KindTurnEnd, 1, `{"turn":1,"reason":{"kind":"completed"}}`)}, nil},
		{"a call logged without its result: outcome unknown, then the step and the turn", []Event{start, step, asked, callA, ev(KindToolResult, 4, `{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"b"}}}`)}, []string{
			strings.Replace(unknown, "-a-4", "-a-5", 1),
			`step/end {"turn":1,"step":1}`,
			`turn/end {"turn":1,"reason":{"kind":"interrupted"}}`,
		}},
		{"a call asked but never logged: not started", []Event{start, step, asked, callA}, []string{
			unknown,
			`tool/result {"turn":1,"step":1,"message":{"id":"interrupted-tool-result-b-5","role":"user","source":{"kind":"tool","callId":"b"},"content":[{"type":"tool-result","toolCallId":"b","isError":true,"content":[{"type":"text","text":"` + NotStartedText + `"}]}]},"error":{"name":"ToolNotStartedError","code":"TOOL_NOT_STARTED"}}`,
			`step/end {"turn":1,"step":1}`,
			`turn/end {"turn":1,"reason":{"kind":"interrupted"}}`,
		}},
		{"a closed step's calls are not the tail's", []Event{start, step, asked, ev(KindStepEnd, 3, `{"turn":1,"step":1}`)}, []string{
			`turn/end {"turn":1,"reason":{"kind":"interrupted"}}`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := InterruptedTurnClosers(tc.events)
			if err != nil {
				t.Fatal(err)
			}
			got := closerLines(t, cs)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("closers\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i, c := range cs {
				if last := tc.events[len(tc.events)-1]; c.Seq != last.Seq+1+int64(i) || c.Time != last.Time {
					t.Errorf("closer %d at seq %d time %d, want seq %d time %d", i, c.Seq, c.Time, last.Seq+1+int64(i), last.Time)
				}
			}
		})
	}
}
