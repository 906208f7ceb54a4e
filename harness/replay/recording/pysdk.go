package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// pythonResult reads a Python SDK run's result.json into r.Stream: its
// events (the session's, from the prompt's splice on), its notifications
// (session.event records split as a JSON-RPC run's are, session.status
// values, subagent.* counted) and its final response.
func (l *loader) pythonResult(r *Recording) error {
	data, err := l.read(ResultFile)
	if err != nil {
		return err
	}
	s, err := parsePythonResult(r.Name, data, r.Header.ID, r.Events)
	if err != nil {
		return err
	}
	r.Stream = s
	return nil
}

// pythonKeys are result.json's keys, each required.
var pythonKeys = []string{"session_id", "final_response", "events", "notifications", "session_root"}

// parsePythonResult decodes result.json (data) of the session whose log
// header has id and whose logged events are root.
func parsePythonResult(rec string, data []byte, id string, root []Event) (*Stream, error) {
	var res struct {
		SessionID     *string            `json:"session_id"`
		FinalResponse *string            `json:"final_response"`
		Events        *[]json.RawMessage `json:"events"`
		Notifications *[]json.RawMessage `json:"notifications"`
		SessionRoot   *string            `json:"session_root"`
	}
	if err := decodeStrict(data, &res); err != nil {
		e := jsonError(rec, ResultFile, data, 0, err)
		if strings.HasPrefix(e.Problem, "truncated") {
			e.Line = lineAt(data, int64(len(bytes.TrimRight(data, " \t\r\n")))) // where the input ends
		}
		return nil, e
	}
	fail := func(key, format string, args ...any) error {
		return &Error{Recording: rec, File: ResultFile, Line: max(lineOfKey(data, key), 1), Field: key, Problem: fmt.Sprintf(format, args...)}
	}
	for i, v := range []bool{res.SessionID == nil, res.FinalResponse == nil, res.Events == nil, res.Notifications == nil, res.SessionRoot == nil} {
		if v {
			return nil, fail(pythonKeys[i], "missing (result.json holds %v)", pythonKeys)
		}
	}
	if *res.SessionID != id {
		return nil, fail("session_id", "%q is not %s's id %q", *res.SessionID, SessionFile, id)
	}
	lines := elementLines(data, "events", "notifications")
	s := &Stream{File: ResultFile, ResultFile: ResultFile, ResultLine: lineOfKey(data, "final_response"), Result: StreamResult{Output: *res.FinalResponse}}
	next := int64(-1)
	for i, raw := range *res.Events {
		evs, err := parseLine(rec, raw, lineOf(lines["events"], i), false, next, nil)
		if err != nil {
			return nil, under(err, ResultFile, fmt.Sprintf("events[%d]", i))
		}
		next = evs[len(evs)-1].Seq + 1
		s.Events = append(s.Events, evs...)
	}
	nf := &notifier{rec: rec, file: ResultFile, params: "payload", root: root, s: &Stream{}, start: -1}
	for i, raw := range *res.Notifications {
		if err := nf.take(raw, lineOf(lines["notifications"], i), fmt.Sprintf("notifications[%d].", i)); err != nil {
			return nil, err
		}
	}
	s.Notified, s.Children, s.Statuses, s.Subagents = nf.s.Events, nf.s.Children, nf.s.Statuses, nf.s.Subagents
	return s, nil
}

// lineOf is lines[i], or 1 where the walk found no line for it.
func lineOf(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 1
}

// elementLines are the 1-based lines where each element of the arrays
// under the top-level keys of the JSON object data starts (the walk stops
// quietly at anything else: the strict decoding names it).
func elementLines(data []byte, keys ...string) map[string][]int {
	out := map[string][]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return out
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		var skip json.RawMessage
		if !slices.Contains(keys, key) {
			if dec.Decode(&skip) != nil {
				return out
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return out
		}
		out[key] = nil
		for dec.More() {
			off := dec.InputOffset()
			for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
				off++
			}
			out[key] = append(out[key], lineAt(data, off))
			if dec.Decode(&skip) != nil {
				return out
			}
		}
		if _, err := dec.Token(); err != nil {
			return out
		}
	}
	return out
}

// IDTokens are the tokens the Python SDK's normaliser writes for a run's
// ids, which the replay's normaliser writes as {{sessionId}}, as it does
// every UUID: the session's ({{parent}}), each child's ({{child-<n>}})
// and a workflow run's ({{workflow-run}}). Nil for every other front end.
func (r *Recording) IDTokens() []string {
	if r.Frontend != PythonSDK {
		return nil
	}
	out := []string{"{{parent}}", "{{workflow-run}}"}
	for i := range r.Children {
		out = append(out, fmt.Sprintf("{{child-%d}}", i+1))
	}
	return out
}
