package recording

import (
	"encoding/json"
	"slices"

	"github.com/dshsim/dshsim/pipeline/session"
)

// surfaceTypes are the event types whose messages join the conversation's
// surface: the only ones a surfaceOp may mark.
var surfaceTypes = map[string]bool{session.KindUserMessage: true, session.KindAssistantMessage: true, session.KindToolResult: true}

// surfaceRange is a surfaceOp read: append (replace false), or replace the
// surface nodes start..end.
type surfaceRange struct {
	replace    bool
	start, end int64
}

// parseSurfaceOp reads a surfaceOp as upstream's session validator does:
// "append", or exactly {op: "replace", start, end} with start and end
// integers of at least 0. Anything else gives the field (under surfaceOp)
// and the problem.
func parseSurfaceOp(raw json.RawMessage) (op surfaceRange, field, problem string) {
	if s, ok := jsonAs[string](raw); ok && s == "append" {
		return surfaceRange{}, "", ""
	}
	m := record(raw)
	if m == nil {
		return op, "surfaceOp", `want "append" or {"op": "replace", "start", "end"}, got ` + showRaw(raw)
	}
	if s, ok := jsonAs[string](m["op"]); !ok || s != "replace" {
		return op, "surfaceOp.op", `want "replace", got ` + showRaw(m["op"])
	}
	if k, p := onlyKeys(m, []string{"op", "start", "end"}, nil); k != "" {
		return op, "surfaceOp." + k, p + ` (a surfaceOp that is not "append" is {"op": "replace", "start", "end"})`
	}
	op.replace = true
	for _, k := range []string{"start", "end"} {
		n, ok := safeInt(m[k])
		if !ok || n < 0 {
			return op, "surfaceOp." + k, "want an event seq (an integer, at least 0), got " + showRaw(m[k])
		}
		if k == "start" {
			op.start = n
		} else {
			op.end = n
		}
	}
	return op, "", ""
}

// fold checks the surfaceOp of event seq of type typ on line lineNo and
// applies it to the surface (the seqs of the messages in force), as
// upstream's session folds a loaded log: a surfaceOp only on a message
// event; a replace's start and end on the surface, start not after end,
// the range replaced by the event. A message event without a surfaceOp
// is read as appended (upstream refuses it; see the package doc).
func (u *shapeUpgrader) fold(rec string, lineNo int, typ string, seq int64, raw json.RawMessage) error {
	if u == nil {
		return nil
	}
	if !surfaceTypes[typ] {
		if len(raw) > 0 {
			return sessionError(rec, lineNo, "surfaceOp", "not allowed on %s: only a user/message, assistant/message or tool/result joins the surface", typ)
		}
		return nil
	}
	if len(raw) == 0 {
		u.surface = append(u.surface, seq)
		return nil
	}
	op, field, problem := parseSurfaceOp(raw)
	switch {
	case field != "":
		return sessionError(rec, lineNo, field, "%s", problem)
	case !op.replace:
		u.surface = append(u.surface, seq)
		return nil
	}
	from, to := slices.Index(u.surface, op.start), slices.Index(u.surface, op.end)
	switch {
	case from < 0:
		return sessionError(rec, lineNo, "surfaceOp.start", "seq %d is not on the surface (the messages in force before this event)", op.start)
	case to < 0:
		return sessionError(rec, lineNo, "surfaceOp.end", "seq %d is not on the surface (the messages in force before this event)", op.end)
	case from > to:
		return sessionError(rec, lineNo, "surfaceOp", "start seq %d comes after end seq %d on the surface", op.start, op.end)
	}
	u.surface = slices.Replace(u.surface, from, to+1, seq)
	return nil
}
