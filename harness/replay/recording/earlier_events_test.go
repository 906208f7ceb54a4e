package recording

import (
	"bufio"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestEarlierEnvelopeUpgrade: the whole-event migrations of upstream's
// session persistence, each as it reads a stored log: a turn/start's
// trigger dropped, a turn/end's earlier reasons made current (the current
// ones and unknown kinds kept), a steering/message read as a user/message
// (its wrapped message, or its content and source with a legacy id); the
// boundaries (turn 1, step 0, an empty message source) are accepted.
func TestEarlierEnvelopeUpgrade(t *testing.T) {
	const end = `{"type":"turn/end","seq":SEQ,"time":0,"data":{"turn":1,"reason":`
	tests := []struct {
		name, event, typ, want string
		earlier                bool
	}{
		{"turn/start's trigger is dropped", `{"type":"turn/start","seq":SEQ,"time":0,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user","rpcId":"r"}}}}`,
			"turn/start", `{"turn":1}`, false},
		{"turn/start without a trigger stays", `{"type":"turn/start","seq":SEQ,"time":0,"data":{"turn":2}}`, "turn/start", `{"turn":2}`, false},
		{"aborted without a reason: legacy", end + `{"kind":"aborted"}}}`, "turn/end", `{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"legacy"}}}`, false},
		{"disposed: aborted, disposed", end + `{"kind":"disposed"}}}`, "turn/end", `{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"disposed"}}}`, false},
		{"error with a failure", end + `{"kind":"error","step":0,"failure":{"message":"m","code":"C","status":429,"providerRetryAfterMs":5,"requestId":"q"}}}}`,
			"turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"C","status":429,"providerRetryAfterMs":5,"requestId":"q"}}}`, false},
		{"error with a message and code", end + `{"kind":"error","step":3,"message":"m","code":"C"}}}`, "turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"C"}}}`, false},
		{"error with a message only: code UNKNOWN", end + `{"kind":"error","step":3,"message":"m"}}}`, "turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"UNKNOWN"}}}`, false},
		{"a current aborted stays", end + `{"kind":"aborted","reason":{"kind":"user"},"x":1}}}`, "turn/end", `{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"user"},"x":1}}`, false},
		{"a current error stays", end + `{"kind":"error","error":{"message":"m","code":"C"}}}}`, "turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"C"}}}`, false},
		{"completed stays", end + `{"kind":"completed"}}}`, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, false},
		{"an unknown kind stays", end + `{"kind":"later","y":2}}}`, "turn/end", `{"turn":1,"reason":{"kind":"later","y":2}}`, false},
		{"steering/message wrapping a message", `{"type":"steering/message","seq":SEQ,"time":0,"data":{"turn":-1,"message":{"id":"m-1","role":"user","content":[],"source":{"kind":"user"}}},"surfaceOp":"append"}`,
			"user/message", `{"id":"m-1","role":"user","content":[],"source":{"kind":"user"}}`, false},
		{"steering/message wrapping an earlier message", `{"type":"steering/message","seq":SEQ,"time":0,"data":{"turn":1,"message":{"content":[],"source":{"kind":"user"}}},"surfaceOp":"append"}`,
			"user/message", `{"id":"legacy-message:{{sessionId}}:1","role":"user","content":[],"source":{"kind":"user"}}`, true},
		{"steering/message with content and source", `{"type":"steering/message","seq":SEQ,"time":0,"data":{"turn":1,"content":[{"type":"text","text":"s"}],"source":{}},"surfaceOp":"append"}`,
			"user/message", `{"id":"legacy-message:{{sessionId}}:1","role":"user","content":[{"type":"text","text":"s"}],"source":{}}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, evs, err := ParseSession("r", SessionFile, []byte(webLog(webTurn+tc.event+"\n")))
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1]
			if got, want := jsonValue(t, string(last.Data)), jsonValue(t, tc.want); last.Type != tc.typ || !reflect.DeepEqual(got, want) || last.Earlier != tc.earlier {
				t.Fatalf("%s %v (earlier %v)\nwant %s %v (earlier %v)", last.Type, got, last.Earlier, tc.typ, want, tc.earlier)
			}
		})
	}
}

// TestEarlierEnvelopeRefusals: what upstream's session persistence and
// validator refuse to load is refused naming the line and field: a
// malformed earlier turn/start, turn/end or steering/message, the types
// and the request/header reason of a vocabulary it cannot upgrade, and a
// surfaceOp that is not "append" or an exact replace of a range on the
// surface, or that marks an event outside the surface.
func TestEarlierEnvelopeRefusals(t *testing.T) {
	const (
		start  = `{"type":"turn/start","seq":SEQ,"time":0,"data":`
		end    = `{"type":"turn/end","seq":SEQ,"time":0,"data":{"turn":1,"reason":`
		steer  = `{"type":"steering/message","seq":SEQ,"time":0,"surfaceOp":"append","data":`
		result = `{"type":"tool/result","seq":SEQ,"time":0,"data":{"message":{"id":"t","role":"user","source":{"kind":"tool","callId":"c"},"content":[]}},"surfaceOp":`
		prompt = `{"type":"user/message","seq":SEQ,"time":0,"data":{"id":"m","role":"user","content":[],"source":{"kind":"user"}},"surfaceOp":"append"}` + "\n"
	)
	tests := []struct {
		name, events string
		line         int
		field        string
		problemStart string
	}{
		{"a trigger with turn 0", start + `{"turn":0,"trigger":{"kind":"message"}}}`, 3, "data.turn", "want a turn number (an integer, at least 1), got 0"},
		{"a trigger with turn 1.5", start + `{"turn":1.5,"trigger":{"kind":"message"}}}`, 3, "data.turn", "want a turn number"},
		{"a trigger beside another field", start + `{"turn":1,"trigger":{"kind":"message"},"x":1}}`, 3, "data.x", "not allowed here"},
		{"a trigger not an object", start + `{"turn":1,"trigger":"message"}}`, 3, "data.trigger", "want an object"},
		{"a trigger with an empty kind", start + `{"turn":1,"trigger":{"kind":""}}}`, 3, "data.trigger.kind", "want a non-empty string"},
		{"a trigger without a kind", start + `{"turn":1,"trigger":{}}}`, 3, "data.trigger.kind", "want a non-empty string, got nothing"},
		{"a turn/end with turn 0", `{"type":"turn/end","seq":SEQ,"time":0,"data":{"turn":0,"reason":{"kind":"completed"}}}`, 3, "data.turn", "want a turn number"},
		{"a turn/end beside another field", end + `{"kind":"completed"},"x":1}}`, 3, "data.x", "not allowed here"},
		{"a reason not an object", end + `"completed"}}`, 3, "data.reason", "want an object"},
		{"a reason kind not a string", end + `{"kind":1}}}`, 3, "data.reason.kind", "want a string"},
		{"completed with more", end + `{"kind":"completed","x":1}}}`, 3, "data.reason.x", "not allowed here"},
		{"disposed with more", end + `{"kind":"disposed","x":1}}}`, 3, "data.reason.x", "not allowed here"},
		{"disposed with a reason", end + `{"kind":"disposed","reason":{"kind":"user"}}}}`, 3, "data.reason.reason", "not allowed here"},
		{"aborted with more and no reason", end + `{"kind":"aborted","x":1}}}`, 3, "data.reason.x", "not allowed here"},
		{"an error's step -1", end + `{"kind":"error","step":-1,"message":"m"}}}`, 3, "data.reason.step", "want a step number (an integer, at least 0)"},
		{"an error's failure beside a message", end + `{"kind":"error","step":0,"failure":{"message":"m","code":"C"},"message":"m"}}}`, 3, "data.reason.message", "not allowed here"},
		{"a failure not an object", end + `{"kind":"error","step":0,"failure":"f"}}}`, 3, "data.reason.failure", "want an object"},
		{"a failure without code", end + `{"kind":"error","step":0,"failure":{"message":"m"}}}}`, 3, "data.reason.failure.code", "missing"},
		{"a failure with more", end + `{"kind":"error","step":0,"failure":{"message":"m","code":"C","x":1}}}}`, 3, "data.reason.failure.x", "not allowed here"},
		{"a failure's status a string", end + `{"kind":"error","step":0,"failure":{"message":"m","code":"C","status":"429"}}}}`, 3, "data.reason.failure.status", "want a number"},
		{"a failure's requestId null", end + `{"kind":"error","step":0,"failure":{"message":"m","code":"C","requestId":null}}}}`, 3, "data.reason.failure.requestId", "want a string"},
		{"an error's message a number", end + `{"kind":"error","step":0,"message":1}}}`, 3, "data.reason.message", "want a string"},
		{"an error's code null", end + `{"kind":"error","step":0,"message":"m","code":null}}}`, 3, "data.reason.code", "want a string"},
		{"an error without a message", end + `{"kind":"error","step":0}}}`, 3, "data.reason.message", "missing"},
		{"a steering/message not an object", steer + `[1]}`, 3, "data", "want an object"},
		{"a steering/message with turn a string", steer + `{"turn":"1","content":[],"source":{}}}`, 3, "data.turn", "want a turn number"},
		{"a steering/message with more", steer + `{"turn":1,"content":[],"source":{},"x":1}}`, 3, "data.x", "not allowed here"},
		{"a steering/message message not an object", steer + `{"turn":1,"message":"m"}}`, 3, "data.message", "not allowed here"},
		{"request/header-delta", `{"type":"request/header-delta","seq":SEQ,"time":0,"data":{}}`, 3, "type", "unsupported legacy request/header-delta event"},
		{"mode/set", `{"type":"mode/set","seq":SEQ,"time":0,"data":{}}`, 3, "type", "unsupported legacy mode/set event"},
		{"a request/header reason fallback", `{"type":"request/header","seq":SEQ,"time":0,"data":{"reason":"fallback"}}`, 3, "data.reason", `unsupported legacy request/header reason "fallback"`},
		{"a surfaceOp of another op", prompt + result + `{"op":"insert"}}`, 4, "surfaceOp.op", `want "replace", got "insert"`},
		{"a surfaceOp of another string", result + `"prepend"}`, 3, "surfaceOp", `want "append" or`},
		{"a surfaceOp null", result + `null}`, 3, "surfaceOp", `want "append" or`},
		{"a replace without end", prompt + result + `{"op":"replace","start":0}}`, 4, "surfaceOp.end", "missing"},
		{"a replace with more", prompt + result + `{"op":"replace","start":1,"end":1,"x":1}}`, 4, "surfaceOp.x", "not allowed here"},
		{"a replace from -1", prompt + result + `{"op":"replace","start":-1,"end":1}}`, 4, "surfaceOp.start", "want an event seq"},
		{"a replace to 1.5", prompt + result + `{"op":"replace","start":1,"end":1.5}}`, 4, "surfaceOp.end", "want an event seq"},
		{"a replace of a seq not on the surface", prompt + result + `{"op":"replace","start":0,"end":1}}`, 4, "surfaceOp.start", "seq 0 is not on the surface"},
		{"a replace to a seq not on the surface", prompt + result + `{"op":"replace","start":1,"end":9}}`, 4, "surfaceOp.end", "seq 9 is not on the surface"},
		{"a replace of a replaced seq", prompt + result + `{"op":"replace","start":1,"end":1}}` + "\n" + result + `{"op":"replace","start":1,"end":1}}`, 5, "surfaceOp.start", "seq 1 is not on the surface"},
		{"a replace ending before its start", prompt + prompt + result + `{"op":"replace","start":2,"end":1}}`, 5, "surfaceOp", "start seq 2 comes after end seq 1"},
		{"a surfaceOp outside the surface", `{"type":"step/start","seq":SEQ,"time":0,"data":{"turn":1,"step":1},"surfaceOp":"append"}`, 3, "surfaceOp", "not allowed on step/start"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseSession("r", SessionFile, []byte(webLog(webTurn+tc.events+"\n")))
			var e *Error
			if !errors.As(err, &e) || e.File != SessionFile || e.Line != tc.line || e.Field != tc.field || !strings.HasPrefix(e.Problem, tc.problemStart) {
				t.Fatalf("ParseSession: %v; want %s:%d field %q problem %q...", err, SessionFile, tc.line, tc.field, tc.problemStart)
			}
		})
	}
}

// TestSurfaceFold: a replace of a range on the surface is read (the
// replacing event takes the range's place, so the next replace may name
// it), and a surface event without a surfaceOp is read as appended.
func TestSurfaceFold(t *testing.T) {
	const (
		bare   = `{"type":"user/message","seq":SEQ,"time":0,"data":{"id":"m","role":"user","content":[],"source":{"kind":"user"}}}` + "\n"
		result = `{"type":"tool/result","seq":SEQ,"time":0,"data":{"message":{"id":"t","role":"user","source":{"kind":"tool","callId":"c"},"content":[]}},"surfaceOp":`
	)
	log := webTurn + bare + bare + result + `{"op":"replace","start":1,"end":2}}` + "\n" + result + `{"op":"replace","start":3,"end":3}}` + "\n"
	if _, _, err := ParseSession("r", SessionFile, []byte(webLog(log))); err != nil {
		t.Fatal(err)
	}
}

// TestStreamEventsAreNotUpgraded: outside a session log (a stream's
// events) no migration applies: a steering/message is an unknown type.
func TestStreamEventsAreNotUpgraded(t *testing.T) {
	rec := `{"type":"session_event","sessionId":"s","event":{"type":"steering/message","seq":0,"time":0,"data":{"turn":1,"content":[],"source":{}}}}` + "\n" + `{"type":"result","sessionId":"s","output":""}` + "\n"
	_, err := parseStream("r", &lineReader{r: bufio.NewReader(strings.NewReader(rec)), rec: "r", file: StreamFile, max: Bounds{}.WithDefaults().MaxLineBytes})
	var e *Error
	if !errors.As(err, &e) || e.File != StreamFile || e.Line != 1 || !strings.Contains(e.Problem, `unknown event type "steering/message"`) {
		t.Fatalf("parseStream: %v; want %s:1 unknown event type", err, StreamFile)
	}
}
