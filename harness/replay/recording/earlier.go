package recording

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
)

// shapeUpgrader reads a session log's message events in their earlier
// shape, written before messages had identities, as upstream's session
// persistence reads a stored log (its migrateLegacyMessageEvent):
//
//   - a user/message with content and source and no id, role or message
//     gets the id legacy-message:<session id>:<seq> and the role user;
//   - an assistant/message with content and provenance and no message
//     gets message {id, role assistant, content, source: provenance with
//     kind model};
//   - a tool/result with callId, content and isError and no message gets
//     message {id, role user, content: one tool-result block (toolCallId,
//     content, isError), source {kind tool, callId}}; a result whose
//     surfaceOp replaces from seq N takes the id of N's message.
//
// The event's other fields (turn, step, meta, error) stay. An event in
// the current shape is left as it is; one with some of an earlier
// shape's fields and not all is an error naming the missing one (upstream
// leaves it to its validator, which rejects it; a user/message's are
// both shapes', so its typed view names the missing one).
type shapeUpgrader struct {
	// session is the log's session id (its header's).
	session string
	// ids are the message ids of the events read so far, by seq.
	ids map[int64]string
	// surface is the seqs of the messages in force, in order ([fold]).
	surface []int64
}

func newShapeUpgrader(sessionID string) *shapeUpgrader {
	return &shapeUpgrader{session: sessionID, ids: map[int64]string{}}
}

// earlierShapes are, per event type, the fields that make its earlier
// shape (all present) and the fields whose presence makes it the current
// one.
var earlierShapes = map[string]struct{ earlier, current []string }{
	session.KindUserMessage:      {earlier: []string{"content", "source"}, current: []string{"id", "role", "message"}},
	session.KindAssistantMessage: {earlier: []string{"content", "provenance"}, current: []string{"message"}},
	session.KindToolResult:       {earlier: []string{"callId", "content", "isError"}, current: []string{"message"}},
}

// upgrade returns the type and data of event seq of type typ on line
// lineNo as upstream's session persistence reads them from a stored log,
// in its order: a turn/start's trigger dropped, a turn/end's earlier
// reason made current, a steering/message read as a user/message
// ([upgradeEnvelope]), then the message shape ([shapeUpgrader.message]);
// earlier reports a message read from the earlier shape. Outside a session
// log (u nil) the type and data are as stored.
func (u *shapeUpgrader) upgrade(rec string, lineNo int, typ string, seq int64, data, surfaceOp json.RawMessage) (outTyp string, out json.RawMessage, earlier bool, err error) {
	if u != nil {
		var minted bool
		if typ, data, minted, err = upgradeEnvelope(rec, lineNo, u.session, typ, seq, data); err != nil {
			return "", nil, false, err
		}
		if minted {
			u.note(seq, typ, record(data))
			return typ, data, true, nil
		}
	}
	out, earlier, err = u.message(rec, lineNo, typ, seq, data, surfaceOp)
	return typ, out, earlier, err
}

// message returns the data of message event seq of type typ on line
// lineNo in the current shape (data itself when it is in it; earlier
// reports it was not), and notes its message id.
func (u *shapeUpgrader) message(rec string, lineNo int, typ string, seq int64, data, surfaceOp json.RawMessage) (out json.RawMessage, earlier bool, err error) {
	shape, ok := earlierShapes[typ]
	if !ok {
		return data, false, nil
	}
	var d map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil {
		return data, false, nil // not an object: the typed view names the field
	}
	has := func(k string) bool { _, ok := d[k]; return ok }
	if slices.ContainsFunc(shape.current, has) || !slices.ContainsFunc(shape.earlier, has) {
		u.note(seq, typ, d)
		return data, false, nil
	}
	for _, k := range shape.earlier {
		if !has(k) && typ == session.KindUserMessage {
			return data, false, nil // both shapes hold content and source: the typed view names the missing one
		}
		if !has(k) {
			return nil, false, sessionError(rec, lineNo, "data."+k, "missing (the earlier shape of %s, without %s, holds %s)", typ, strings.Join(shape.current, " or "), strings.Join(shape.earlier, ", "))
		}
	}
	if u == nil {
		return nil, false, sessionError(rec, lineNo, "data.message", "missing: %s in the earlier shape (content and no message) is read in a session log only, where the events before it give its message id", typ)
	}
	if err := checkEarlier(rec, lineNo, typ, d); err != nil {
		return nil, false, err
	}
	out, err = u.upgraded(typ, seq, d, surfaceOp)
	if err != nil {
		return nil, false, sessionError(rec, lineNo, "data", "upgrading the earlier shape of %s: %v", typ, err)
	}
	u.note(seq, typ, d)
	return out, true, nil
}

// upgraded is the current shape of d, the checked data of event seq in
// the earlier shape of typ (d is changed to it).
func (u *shapeUpgrader) upgraded(typ string, seq int64, d map[string]json.RawMessage, surfaceOp json.RawMessage) (json.RawMessage, error) {
	id := fmt.Sprintf("legacy-message:%s:%d", u.session, seq)
	var msg map[string]any
	switch typ {
	case session.KindUserMessage:
		d["role"] = json.RawMessage(`"user"`)
		raw, err := json.Marshal(id)
		if err != nil {
			return nil, err
		}
		d["id"] = raw
		return json.Marshal(d)
	case session.KindAssistantMessage:
		var src map[string]any
		if err := json.Unmarshal(d["provenance"], &src); err != nil {
			return nil, err
		}
		src["kind"] = "model"
		msg = map[string]any{"id": id, "role": "assistant", "content": d["content"], "source": src}
		delete(d, "content")
		delete(d, "provenance")
	case session.KindToolResult:
		msg = map[string]any{"id": id, "role": "user", "source": map[string]any{"kind": "tool", "callId": d["callId"]},
			"content": []any{map[string]any{"type": "tool-result", "toolCallId": d["callId"], "content": d["content"], "isError": d["isError"]}}}
		if start, ok := replaceStart(surfaceOp); ok {
			if inherited, found := u.ids[start]; found {
				msg["id"] = inherited
			} else {
				delete(msg, "id") // upstream's lookup of an unknown seq gives no id
			}
		}
		delete(d, "callId")
		delete(d, "content")
		delete(d, "isError")
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	d["message"] = raw
	return json.Marshal(d)
}

// checkEarlier checks the types of an earlier shape's fields: content an
// array of blocks with a type, provenance an object, callId a string,
// isError a boolean.
func checkEarlier(rec string, lineNo int, typ string, d map[string]json.RawMessage) error {
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal(d["content"], &blocks); err != nil {
		return sessionError(rec, lineNo, "data.content", "want an array of content blocks (the earlier shape of %s), got %s", typ, d["content"])
	}
	for i, b := range blocks {
		var t string
		if json.Unmarshal(b["type"], &t) != nil || t == "" {
			return sessionError(rec, lineNo, fmt.Sprintf("data.content[%d].type", i), "want a block type, got %s", show(b["type"]))
		}
	}
	var s string
	var obj map[string]json.RawMessage
	var flag bool
	switch {
	case typ == session.KindAssistantMessage && (json.Unmarshal(d["provenance"], &obj) != nil || obj == nil):
		return sessionError(rec, lineNo, "data.provenance", "want an object (the model's provider and model), got %s", d["provenance"])
	case typ == session.KindToolResult && json.Unmarshal(d["callId"], &s) != nil:
		return sessionError(rec, lineNo, "data.callId", "want a string, got %s", d["callId"])
	case typ == session.KindToolResult && json.Unmarshal(d["isError"], &flag) != nil:
		return sessionError(rec, lineNo, "data.isError", "want a boolean, got %s", d["isError"])
	}
	return nil
}

// note keeps the message id of an event in the current shape: a
// user/message's own, another's message's.
func (u *shapeUpgrader) note(seq int64, typ string, d map[string]json.RawMessage) {
	if u == nil {
		return
	}
	msg := d
	if typ != session.KindUserMessage {
		if json.Unmarshal(d["message"], &msg) != nil {
			return
		}
	}
	var id string
	if json.Unmarshal(msg["id"], &id) == nil {
		u.ids[seq] = id
	}
}

// replaceStart is the seq a surfaceOp {op: replace, start} replaces from.
func replaceStart(raw json.RawMessage) (int64, bool) {
	var op struct {
		Op    string   `json:"op"`
		Start *float64 `json:"start"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &op) != nil || op.Op != "replace" || op.Start == nil {
		return 0, false
	}
	return int64(*op.Start), true
}
