package recording

import (
	"bufio"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// upgradedData parses a one-event log (after a turn/start at seq 0) and
// returns the event's data decoded, and whether it was read in the
// earlier shape.
func upgradedData(t *testing.T, events string) (map[string]any, bool) {
	t.Helper()
	_, evs, err := ParseSession("r", SessionFile, []byte(webLog(events)))
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	var d map[string]any
	if err := json.Unmarshal(last.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d, last.Earlier
}

func jsonValue(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestEarlierShapeUpgrade: a message event in the earlier shape is read in
// the current one as upstream's session persistence reads it (the
// legacy-message:<session>:<seq> id, the wrapper, the provenance as a
// model source, the tool-result block), the event's other fields kept; a
// replacing tool/result inherits the replaced message's id; an event in
// the current shape is left as it is.
func TestEarlierShapeUpgrade(t *testing.T) {
	tests := []struct {
		name, events string
		want         string
		earlier      bool
	}{
		{"tool/result",
			`{"type":"tool/result","seq":SEQ,"time":0,"data":{"turn":1,"step":2,"callId":"c1","content":[{"type":"text","text":"out"}],"isError":true,"meta":{"m":1}}}` + "\n",
			`{"turn":1,"step":2,"meta":{"m":1},"message":{"id":"legacy-message:{{sessionId}}:0","role":"user","source":{"kind":"tool","callId":"c1"},"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"out"}],"isError":true}]}}`, true},
		{"assistant/message",
			`{"type":"assistant/message","seq":SEQ,"time":0,"data":{"turn":1,"step":1,"content":[{"type":"text","text":"hi"}],"provenance":{"provider":"p","model":"m"},"usage":{"inputTokens":3}}}` + "\n",
			`{"turn":1,"step":1,"usage":{"inputTokens":3},"message":{"id":"legacy-message:{{sessionId}}:0","role":"assistant","content":[{"type":"text","text":"hi"}],"source":{"provider":"p","model":"m","kind":"model"}}}`, true},
		{"user/message",
			`{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[{"type":"text","text":"go"}],"source":{"kind":"user"}}}` + "\n",
			`{"id":"legacy-message:{{sessionId}}:0","role":"user","content":[{"type":"text","text":"go"}],"source":{"kind":"user"}}`, true},
		{"a replacing tool/result inherits the replaced message's id",
			`{"type":"user/message","seq":SEQ,"time":0,"data":{"id":"m-7","role":"user","content":[],"source":{"kind":"user"}}}` + "\n" +
				`{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":"c","content":[],"isError":false},"surfaceOp":{"op":"replace","start":0,"end":0}}` + "\n",
			`{"message":{"id":"m-7","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[],"isError":false}]}}`, true},
		{"an appended tool/result gets its own id",
			`{"type":"user/message","seq":SEQ,"time":0,"data":{"id":"m-7","role":"user","content":[],"source":{"kind":"user"}}}` + "\n" +
				`{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":"c","content":[],"isError":false},"surfaceOp":"append"}` + "\n",
			`{"message":{"id":"legacy-message:{{sessionId}}:1","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[],"isError":false}]}}`, true},
		{"a replacing tool/result inherits an upgraded message's id",
			`{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[],"source":{"kind":"user"}}}` + "\n" +
				`{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":"c","content":[],"isError":false},"surfaceOp":{"op":"replace","start":0,"end":0}}` + "\n",
			`{"message":{"id":"legacy-message:{{sessionId}}:0","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[],"isError":false}]}}`, true},
		{"the current tool/result shape stays",
			`{"type":"tool/result","seq":SEQ,"time":0,"data":{"message":{"source":{"kind":"tool","callId":"c"},"content":[]},"callId":"x"}}` + "\n",
			`{"message":{"source":{"kind":"tool","callId":"c"},"content":[]},"callId":"x"}`, false},
		{"the current user/message shape stays",
			`{"type":"user/message","seq":SEQ,"time":0,"data":{"role":"user","content":[],"source":{"kind":"user"}}}` + "\n",
			`{"role":"user","content":[],"source":{"kind":"user"}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, earlier := upgradedData(t, tc.events)
			if want := jsonValue(t, tc.want); !reflect.DeepEqual(got, want) || earlier != tc.earlier {
				t.Fatalf("data = %v (earlier %v)\nwant %v (earlier %v)", got, earlier, want, tc.earlier)
			}
		})
	}
}

// TestEarlierShapeRejectsNamingLineAndField: an event with some of an
// earlier shape's fields and not all, or one of them of the wrong type, is
// refused naming the line and field; a stream record in the earlier shape
// is refused (its message id needs the log before it).
func TestEarlierShapeRejectsNamingLineAndField(t *testing.T) {
	tests := []struct {
		name, event  string
		field        string
		problemStart string
	}{
		{"tool/result without content", `{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":"c","isError":false}}`, "data.content", "missing (the earlier shape of tool/result, without message, holds callId, content, isError)"},
		{"tool/result without callId", `{"type":"tool/result","seq":SEQ,"time":0,"data":{"content":[],"isError":false}}`, "data.callId", "missing (the earlier shape"},
		{"tool/result with neither shape", `{"type":"tool/result","seq":SEQ,"time":0,"data":{"turn":1}}`, "data.message", "missing (required in tool/result)"},
		{"assistant/message without provenance", `{"type":"assistant/message","seq":SEQ,"time":0,"data":{"content":[]}}`, "data.provenance", "missing (the earlier shape of assistant/message"},
		{"a provenance not an object", `{"type":"assistant/message","seq":SEQ,"time":0,"data":{"content":[],"provenance":"p"}}`, "data.provenance", "want an object"},
		{"a provenance null", `{"type":"assistant/message","seq":SEQ,"time":0,"data":{"content":[],"provenance":null}}`, "data.provenance", "want an object"},
		{"a callId not a string", `{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":7,"content":[],"isError":false}}`, "data.callId", "want a string"},
		{"an isError not a boolean", `{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":"c","content":[],"isError":"no"}}`, "data.isError", "want a boolean"},
		{"content not an array", `{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":"c","content":"x","isError":false}}`, "data.content", "want an array of content blocks"},
		{"a block without a type", `{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":"c","content":[{"type":"text"},{"text":"x"}],"isError":false}}`, "data.content[1].type", "want a block type"},
		{"data not an object", `{"type":"tool/result","seq":SEQ,"time":0,"data":[1]}`, "data", "want object, got JSON array"},
		{"a block with an empty type", `{"type":"tool/result","seq":SEQ,"time":0,"data":{"callId":"c","content":[{"type":""}],"isError":false}}`, "data.content[0].type", "want a block type"},
		{"a user/message without source", `{"type":"user/message","seq":SEQ,"time":0,"data":{"content":[]}}`, "data.source", "missing (required in user/message)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseSession("r", SessionFile, []byte(webLog(webTurn+tc.event+"\n")))
			var e *Error
			if !errors.As(err, &e) || e.Line != 3 || e.Field != tc.field || !strings.HasPrefix(e.Problem, tc.problemStart) {
				t.Fatalf("ParseSession: %v; want %s:3 field %q problem %q...", err, SessionFile, tc.field, tc.problemStart)
			}
		})
	}
	rec := `{"type":"session_event","sessionId":"s","event":{"type":"tool/result","seq":0,"time":0,"data":{"callId":"c","content":[],"isError":false}}}` + "\n" + `{"type":"result","sessionId":"s","output":""}` + "\n"
	_, err := parseStream("r", &lineReader{r: bufio.NewReader(strings.NewReader(rec)), rec: "r", file: StreamFile, max: Bounds{}.WithDefaults().MaxLineBytes})
	var e *Error
	if !errors.As(err, &e) || e.File != StreamFile || e.Line != 1 || e.Field != "event.data.message" || !strings.Contains(e.Problem, "read in a session log only") {
		t.Fatalf("parseStream: %v; want %s:1 field event.data.message refused", err, StreamFile)
	}
}
