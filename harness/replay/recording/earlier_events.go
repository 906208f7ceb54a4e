package recording

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/dshsim/dshsim/pipeline/session"
)

// kindSteeringMessage is the event the web app logged a steered message
// as before steering entered the inbox; upstream's session persistence
// reads it as a user/message (a legacy type: no product code writes it).
const kindSteeringMessage = "steering/message"

// refusedLegacy are the event types of an earlier vocabulary upstream's
// session persistence refuses to load, with no upgrade path.
var refusedLegacy = map[string]bool{"request/header-delta": true, "mode/set": true}

// upgradeTurnStart reads a turn/start in its earlier shape, data {turn,
// trigger}, as upstream does (its migrateLegacyTurnStartEvent): the
// trigger is dropped, data {turn}. The whole earlier envelope must hold:
// turn an integer of at least 1, no field beside turn and trigger, trigger
// an object whose kind is a non-empty string; else it is refused naming
// the field. Data without a trigger is returned as it is (changed false).
func upgradeTurnStart(rec string, lineNo int, d map[string]json.RawMessage) (out json.RawMessage, changed bool, err error) {
	if _, ok := d["trigger"]; !ok {
		return nil, false, nil
	}
	bad := func(field, format string, args ...any) (json.RawMessage, bool, error) {
		return nil, false, sessionError(rec, lineNo, field, "%s (a turn/start with a trigger, the earlier shape, holds turn and trigger {kind, ...})", fmt.Sprintf(format, args...))
	}
	if field, problem := turnEnvelope(d, "trigger"); field != "" {
		return bad(field, "%s", problem)
	}
	trigger := record(d["trigger"])
	if kind, ok := jsonAs[string](trigger["kind"]); !ok || kind == "" {
		return bad("data.trigger.kind", "want a non-empty string, got %s", showRaw(trigger["kind"]))
	}
	out, err = json.Marshal(map[string]json.RawMessage{"turn": d["turn"]})
	return out, err == nil, err
}

// upgradeTurnEnd reads a turn/end as upstream does (its
// migrateLegacyTurnEndEvent). Every turn/end must hold turn (an integer of
// at least 1) and reason (an object with a string kind) and nothing else.
// Of the reasons, completed, blocked, max-tokens and interrupted hold
// only their kind; the earlier ones become current:
//
//   - {kind: aborted} (no reason) becomes {kind: aborted, reason: {kind: legacy}};
//   - {kind: disposed} becomes {kind: aborted, reason: {kind: disposed}};
//   - {kind: error, step, failure} (no error; failure {message, code,
//     status?, providerRetryAfterMs?, requestId?}) becomes {kind: error,
//     error: failure};
//   - {kind: error, step, message, code?} (no error) becomes {kind: error,
//     error: {message, code}}, code UNKNOWN when it has none.
//
// An aborted with a reason, an error with an error and any other kind stay
// as they are. What breaks a rule is refused naming the field.
func upgradeTurnEnd(rec string, lineNo int, d map[string]json.RawMessage) (out json.RawMessage, changed bool, err error) {
	bad := func(field, format string, args ...any) (json.RawMessage, bool, error) {
		return nil, false, sessionError(rec, lineNo, field, "%s (upstream's session persistence refuses such a turn/end)", fmt.Sprintf(format, args...))
	}
	if d["turn"] == nil || d["reason"] == nil {
		return nil, false, nil // the typed view names the missing field
	}
	if field, problem := turnEnvelope(d, "reason"); field != "" {
		return bad(field, "%s", problem)
	}
	r := record(d["reason"])
	kind, ok := jsonAs[string](r["kind"])
	if !ok {
		return bad("data.reason.kind", "want a string, got %s", showRaw(r["kind"]))
	}
	reason, field, problem := currentReason(kind, r)
	if field != "" {
		return bad("data.reason"+field, "%s", problem)
	}
	if reason == nil {
		return nil, false, nil
	}
	d["reason"] = reason
	out, err = json.Marshal(d)
	return out, err == nil, err
}

// turnEnvelope checks the data d of an earlier turn event: turn an
// integer of at least 1, other an object, nothing else. It returns the
// field and problem that break it, or "".
func turnEnvelope(d map[string]json.RawMessage, other string) (field, problem string) {
	if n, ok := safeInt(d["turn"]); !ok || n < 1 {
		return "data.turn", "want a turn number (an integer, at least 1), got " + showRaw(d["turn"])
	}
	if k, p := onlyKeys(d, []string{"turn", other}, nil); k != "" {
		return "data." + k, p
	}
	if record(d[other]) == nil {
		return "data." + other, "want an object, got " + showRaw(d[other])
	}
	return "", ""
}

// currentReason is the current shape of a turn/end's reason r of kind
// kind (nil: r is current), or the field (".x", under data.reason) and
// problem that make it malformed.
func currentReason(kind string, r map[string]json.RawMessage) (out json.RawMessage, field, problem string) {
	has := func(k string) bool { _, ok := r[k]; return ok }
	switch kind {
	case "completed", "blocked", "max-tokens", "interrupted":
		k, p := onlyKeys(r, []string{"kind"}, nil)
		return nil, dot(k), p
	case "aborted", "disposed":
		if kind == "aborted" && has("reason") {
			return nil, "", ""
		}
		if k, p := onlyKeys(r, []string{"kind"}, nil); k != "" {
			return nil, dot(k), p
		}
		was := map[string]string{"aborted": "legacy", "disposed": "disposed"}[kind]
		return json.RawMessage(`{"kind":"aborted","reason":{"kind":"` + was + `"}}`), "", ""
	case "error":
		if has("error") {
			return nil, "", ""
		}
		return errorReason(r)
	}
	return nil, "", ""
}

// errorReason is the current shape of an earlier error reason r (kind
// error, no error): see [upgradeTurnEnd].
func errorReason(r map[string]json.RawMessage) (out json.RawMessage, field, problem string) {
	if n, ok := safeInt(r["step"]); !ok || n < 0 {
		return nil, ".step", "want a step number (an integer, at least 0), got " + showRaw(r["step"])
	}
	if _, ok := r["failure"]; ok {
		if k, p := onlyKeys(r, []string{"kind", "step", "failure"}, nil); k != "" {
			return nil, dot(k), p
		}
		f := record(r["failure"])
		if f == nil {
			return nil, ".failure", "want an object, got " + showRaw(r["failure"])
		}
		if k, p := onlyKeys(f, []string{"message", "code"}, []string{"status", "providerRetryAfterMs", "requestId"}); k != "" {
			return nil, ".failure" + dot(k), p
		}
		for _, k := range []string{"message", "code", "requestId"} {
			if _, ok := jsonAs[string](f[k]); !ok && (k != "requestId" || f[k] != nil) {
				return nil, ".failure." + k, "want a string, got " + showRaw(f[k])
			}
		}
		for _, k := range []string{"status", "providerRetryAfterMs"} {
			if _, ok := jsonAs[float64](f[k]); !ok && f[k] != nil {
				return nil, ".failure." + k, "want a number, got " + showRaw(f[k])
			}
		}
		return json.RawMessage(`{"kind":"error","error":` + string(r["failure"]) + `}`), "", ""
	}
	required := []string{"kind", "step", "message"}
	if _, ok := r["code"]; ok {
		required = append(required, "code")
	}
	if k, p := onlyKeys(r, required, nil); k != "" {
		return nil, dot(k), p
	}
	code, ok := jsonAs[string](r["code"])
	if !ok && r["code"] != nil {
		return nil, ".code", "want a string, got " + showRaw(r["code"])
	}
	message, ok := jsonAs[string](r["message"])
	if !ok {
		return nil, ".message", "want a string, got " + showRaw(r["message"])
	}
	if r["code"] == nil {
		code = "UNKNOWN"
	}
	return json.RawMessage(`{"kind":"error","error":{"message":` + quote(message) + `,"code":` + quote(code) + `}}`), "", ""
}

// upgradeSteering reads a steering/message as upstream does (its
// migrateLegacySteeringEvent): as a user/message. Data {turn, message}
// (turn an integer, message an object, nothing else) becomes the message;
// data {turn, content, source} (nothing else) becomes {content, source,
// id legacy-message:<session id>:<seq>, role user} (minted: earlier
// true). Any other data is refused naming the field.
func upgradeSteering(rec string, lineNo int, sessionID string, seq int64, data json.RawMessage) (out json.RawMessage, minted bool, err error) {
	bad := func(field, format string, args ...any) (json.RawMessage, bool, error) {
		return nil, false, sessionError(rec, lineNo, field, "%s (a steering/message holds turn and message, or turn, content and source)", fmt.Sprintf(format, args...))
	}
	d := record(data)
	if d == nil {
		return bad("data", "want an object, got %s", showRaw(data))
	}
	_, turnOK := safeInt(d["turn"])
	if w := record(d["message"]); w != nil && turnOK {
		if k, _ := onlyKeys(d, []string{"turn", "message"}, nil); k == "" {
			return d["message"], false, nil
		}
	}
	if !turnOK {
		return bad("data.turn", "want a turn number (an integer), got %s", showRaw(d["turn"]))
	}
	if k, problem := onlyKeys(d, []string{"turn", "content", "source"}, nil); k != "" {
		return bad("data."+k, "%s", problem)
	}
	delete(d, "turn")
	d["id"], err = json.Marshal(fmt.Sprintf("legacy-message:%s:%d", sessionID, seq))
	if err != nil {
		return nil, false, err
	}
	d["role"] = json.RawMessage(`"user"`)
	out, err = json.Marshal(d)
	return out, err == nil, err
}

// refusedFallback refuses a request/header whose reason is "fallback", an
// earlier vocabulary upstream refuses to load.
func refusedFallback(rec string, lineNo int, d map[string]json.RawMessage) error {
	if reason, ok := jsonAs[string](d["reason"]); ok && reason == "fallback" {
		return sessionError(rec, lineNo, "data.reason", "unsupported legacy request/header reason \"fallback\" (upstream's session persistence refuses to load a log holding one)")
	}
	return nil
}

// upgradeEnvelope applies the migrations of whole events that come before
// the message shape's: a turn/start's trigger, a turn/end's reason, a
// steering/message read as a user/message (typ is the type the event is
// read as).
func upgradeEnvelope(rec string, lineNo int, sessionID string, typ string, seq int64, data json.RawMessage) (outTyp string, out json.RawMessage, minted bool, err error) {
	if typ == kindSteeringMessage {
		out, minted, err = upgradeSteering(rec, lineNo, sessionID, seq, data)
		return session.KindUserMessage, out, minted, err
	}
	d := record(data)
	if d == nil {
		return typ, data, false, nil // not an object: the typed view names the field
	}
	var changed bool
	switch typ {
	case session.KindTurnStart:
		out, changed, err = upgradeTurnStart(rec, lineNo, d)
	case session.KindTurnEnd:
		out, changed, err = upgradeTurnEnd(rec, lineNo, d)
	case session.KindRequestHeader:
		err = refusedFallback(rec, lineNo, d)
	}
	if err != nil || !changed {
		return typ, data, false, err
	}
	return typ, out, false, nil
}

// record is raw decoded as a JSON object (nil when it is not one).
func record(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// jsonAs is raw decoded as a T when the JSON value is one (null and a
// missing value are not).
func jsonAs[T string | float64](raw json.RawMessage) (T, bool) {
	var v any
	var zero T
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return zero, false
	}
	t, ok := v.(T)
	return t, ok
}

// safeInt is raw as an integer when it is a JSON number that is a safe
// integer (JavaScript's Number.isSafeInteger: integral, magnitude at most
// 2^53-1).
func safeInt(raw json.RawMessage) (int64, bool) {
	f, ok := jsonAs[float64](raw)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return 0, false
	}
	return int64(f), true
}

// onlyKeys checks that d holds every required key and no key outside
// required and optional, as upstream's hasOnlyKeys: the first offending
// key (keys outside first, sorted) and the problem, or "".
func onlyKeys(d map[string]json.RawMessage, required, optional []string) (key, problem string) {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(required, k) && !slices.Contains(optional, k) {
			return k, fmt.Sprintf("not allowed here (the fields are %v)", append(slices.Clone(required), optional...))
		}
	}
	for _, k := range required {
		if _, ok := d[k]; !ok {
			return k, "missing"
		}
	}
	return "", ""
}

// showRaw is a JSON value as written, or "nothing" when it is missing.
func showRaw(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return string(raw)
}

// dot is ".k", or "" for no key.
func dot(k string) string {
	if k == "" {
		return ""
	}
	return "." + k
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
