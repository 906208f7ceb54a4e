package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// notifications reads a JSON-RPC run's notifications.expected.jsonl and
// result.expected.json into r.Stream: the session.event records split
// into the session's (those that continue its log, seq and type) and its
// children's (in the order each child's first record came), the
// session's session.status values, and the final response.
func (l *loader) notifications(r *Recording) error {
	lr, done, err := l.lines(NotificationsFile)
	if err != nil {
		return err
	}
	s, err := parseNotifications(r.Name, lr, r.Events)
	done()
	if err != nil {
		return err
	}
	data, err := l.read(ResultExpectedFile)
	if err != nil {
		return err
	}
	var res struct {
		SessionID     *string `json:"sessionId"`
		FinalResponse *string `json:"finalResponse"`
	}
	if err := decodeStrict(data, &res); err != nil {
		return jsonError(r.Name, ResultExpectedFile, data, 0, err)
	}
	if res.FinalResponse == nil {
		return l.fail(ResultExpectedFile, 1, "finalResponse", "missing")
	}
	s.Result, s.ResultFile, s.ResultLine = StreamResult{Output: *res.FinalResponse}, ResultExpectedFile, 0
	r.Stream = s
	return nil
}

// parseNotifications decodes the notifications streamed by lr; root are
// the session's logged events, which its session.event records follow.
func parseNotifications(rec string, lr *lineReader, root []Event) (*Stream, error) {
	fail := func(line int, field, format string, args ...any) error {
		return &Error{Recording: rec, File: NotificationsFile, Line: line, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	s := &Stream{File: NotificationsFile}
	var kids []int64 // each child's next seq
	start := -1      // where in root the session's records start
	for {
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		var n struct {
			Method *string `json:"method"`
			Params *struct {
				Event  *json.RawMessage `json:"event"`
				Status *string          `json:"status"`
			} `json:"params"`
		}
		if err := json.Unmarshal(ln, &n); err != nil {
			return nil, jsonError(rec, NotificationsFile, ln, lr.n, err)
		}
		switch {
		case n.Method == nil:
			return nil, fail(lr.n, "method", "missing")
		case n.Params == nil:
			return nil, fail(lr.n, "params", "missing")
		}
		switch *n.Method {
		case "session.status":
			if n.Params.Status == nil || (*n.Params.Status != "running" && *n.Params.Status != "idle") {
				return nil, fail(lr.n, "params.status", "want \"running\" or \"idle\", got %s", show(n.Params.Status))
			}
			s.Statuses = append(s.Statuses, *n.Params.Status)
		case "subagent.started", "subagent.finished":
			s.Subagents++
		case "session.event":
			if n.Params.Event == nil {
				return nil, fail(lr.n, "params.event", "missing")
			}
			evs, err := parseLine(rec, *n.Params.Event, lr.n, false, -1, nil)
			if err != nil {
				return nil, streamError(err, NotificationsFile)
			}
			if start < 0 && len(root) > 0 {
				start = indexOfSeq(root, evs[0])
			}
			kids = s.place(evs[0], root[max(start, 0):], kids)
		default:
			return nil, fail(lr.n, "method", "want session.event, session.status, subagent.started or subagent.finished, got %q", *n.Method)
		}
	}
}

// place files e with the session's events when it continues the session's
// log (the next seq, of that type), else with the child whose next seq it
// is (a new child when none), and returns the children's next seqs.
func (s *Stream) place(e Event, root []Event, kids []int64) []int64 {
	if i := len(s.Events); i < len(root) && root[i].Seq == e.Seq && root[i].Type == e.Type {
		s.Events = append(s.Events, e)
		return kids
	}
	for i, next := range kids {
		if next == e.Seq {
			s.Children[i] = append(s.Children[i], e)
			kids[i] = e.Seq + 1
			return kids
		}
	}
	s.Children = append(s.Children, []Event{e})
	return append(kids, e.Seq+1)
}

// indexOfSeq is the index of root's event of e's seq and type (-1: none).
func indexOfSeq(root []Event, e Event) int {
	for i, r := range root {
		if r.Seq == e.Seq && r.Type == e.Type {
			return i
		}
	}
	return -1
}
